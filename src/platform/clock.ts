// The one clock. Expiries (60-minute tokens, 3-day deliveries, 7-day archives) read it, so a test
// server started with CODEHOST_TEST_CLOCK=1 can move time forward through POST /_admin/clock.

/**
 * The latest time the clock may show: every store must hold it. PostgreSQL keeps a rate-limit
 * window's start as 32-bit integer seconds (up to 2038-01-19T03:14:07Z); a day less leaves room for
 * what is stored ahead of now (a window's reset, an hour-long token).
 */
export const LATEST_CLOCK_MS = (2 ** 31 - 1 - 86_400) * 1000;

export class Clock {
  private offsetMs = 0;
  readonly adjustable: boolean;
  /** The last `httpDate()`: its second and its text (one Date made per second, not per answer). */
  private dated = { second: Number.NaN, text: '' };

  constructor(adjustable = false) {
    this.adjustable = adjustable;
  }

  now(): Date {
    return new Date(Date.now() + this.offsetMs);
  }

  nowMs(): number {
    return Date.now() + this.offsetMs;
  }

  /** Now as an HTTP date (`Date`, `Last-Modified`: `Wed, 02 Dec 2026 05:50:00 GMT`). */
  httpDate(): string {
    const second = Math.floor(this.nowMs() / 1000);
    if (second !== this.dated.second) this.dated = { second, text: new Date(second * 1000).toUTCString() };
    return this.dated.text;
  }

  /** Whether moving `seconds` forward keeps the clock at or before LATEST_CLOCK_MS. */
  canAdvance(seconds: number): boolean {
    return Number.isFinite(seconds) && seconds >= 0 && this.nowMs() + seconds * 1000 <= LATEST_CLOCK_MS;
  }

  advance(seconds: number): Date {
    if (!this.adjustable) throw new Error('the clock is not adjustable');
    if (!this.canAdvance(seconds)) throw new RangeError(`the clock cannot move past ${new Date(LATEST_CLOCK_MS).toISOString()}`);
    this.offsetMs += seconds * 1000;
    return this.now();
  }

  /** How far the clock is ahead of the wall clock (saved with a snapshot of the test double). */
  get offset(): number {
    return this.offsetMs;
  }

  /** Sets the clock's lead over the wall clock: 0 after a reset, the saved one after a restore. */
  setOffset(ms: number): void {
    this.offsetMs = this.adjustable ? ms : 0;
  }
}

/** A timestamp as stored (`toISOString()`: UTC, milliseconds). */
const STORED = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** `YYYY-MM-DDTHH:MM:SSZ`, the platform's timestamp form. */
export function isoSeconds(value: Date | string | number): string {
  // Stored timestamps are already in this form but for their milliseconds: cut them off without a
  // Date (lists and exports render hundreds of thousands of them).
  if (typeof value === 'string' && STORED.test(value)) return `${value.slice(0, 19)}Z`;
  const date = value instanceof Date ? value : new Date(value);
  return date.toISOString().replace(/\.\d{3}Z$/, 'Z');
}
