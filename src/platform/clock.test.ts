import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isoSeconds } from './clock.ts';

test('isoSeconds: a stored timestamp, a Date, a number and other text all give YYYY-MM-DDTHH:MM:SSZ in UTC', () => {
  assert.equal(isoSeconds('2026-11-24T21:11:06.123Z'), '2026-11-24T21:11:06Z');
  assert.equal(isoSeconds(new Date('2026-11-24T21:11:06.999Z')), '2026-11-24T21:11:06Z');
  assert.equal(isoSeconds(Date.UTC(2026, 10, 24, 21, 11, 6, 500)), '2026-11-24T21:11:06Z');
  // Not the stored form: parsed as a date.
  assert.equal(isoSeconds('2026-11-24T22:11:06+01:00'), '2026-11-24T21:11:06Z');
  assert.equal(isoSeconds('2026-11-24T21:11:06Z'), '2026-11-24T21:11:06Z');
  assert.equal(isoSeconds('2026-11-24'), '2026-11-24T00:00:00Z');
});
