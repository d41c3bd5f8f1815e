import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Clock, isoSeconds } from './clock.ts';

test('isoSeconds: a stored timestamp, a Date, a number and other text all give YYYY-MM-DDTHH:MM:SSZ in UTC', () => {
  assert.equal(isoSeconds('2026-11-24T21:11:06.123Z'), '2026-11-24T21:11:06Z');
  assert.equal(isoSeconds(new Date('2026-11-24T21:11:06.999Z')), '2026-11-24T21:11:06Z');
  assert.equal(isoSeconds(Date.UTC(2026, 10, 24, 21, 11, 6, 500)), '2026-11-24T21:11:06Z');
  // Not the stored form: parsed as a date.
  assert.equal(isoSeconds('2026-11-24T22:11:06+01:00'), '2026-11-24T21:11:06Z');
  assert.equal(isoSeconds('2026-11-24T21:11:06Z'), '2026-11-24T21:11:06Z');
  assert.equal(isoSeconds('2026-11-24'), '2026-11-24T00:00:00Z');
});

test('httpDate: the clock\'s time as an HTTP date, moved with it (and with a restore\'s offset)', () => {
  const clock = new Clock(true);
  const parsed = (text: string) => Date.parse(text);
  assert.match(clock.httpDate(), /^[A-Z][a-z]{2}, \d{2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2} GMT$/);
  assert.ok(Math.abs(parsed(clock.httpDate()) - Date.now()) < 2_000);
  clock.advance(3660);
  assert.ok(Math.abs(parsed(clock.httpDate()) - Date.now() - 3_660_000) < 2_000);
  clock.setOffset(0);
  assert.ok(Math.abs(parsed(clock.httpDate()) - Date.now()) < 2_000);
  // The text of the clock's second (made once per second).
  const second = (ms: number) => new Date(Math.floor(ms / 1000) * 1000).toUTCString();
  const before = second(clock.nowMs());
  const text = clock.httpDate();
  assert.ok([before, second(clock.nowMs())].includes(text), text);
});
