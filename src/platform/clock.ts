// The one clock. Expiries (60-minute tokens, 3-day deliveries, 7-day archives) read it, so a test
// server started with CODEHOST_TEST_CLOCK=1 can move time forward through POST /_admin/clock.
export class Clock {
  private offsetMs = 0;
  readonly adjustable: boolean;

  constructor(adjustable = false) {
    this.adjustable = adjustable;
  }

  now(): Date {
    return new Date(Date.now() + this.offsetMs);
  }

  nowMs(): number {
    return Date.now() + this.offsetMs;
  }

  advance(seconds: number): Date {
    if (!this.adjustable) throw new Error('the clock is not adjustable');
    this.offsetMs += seconds * 1000;
    return this.now();
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
