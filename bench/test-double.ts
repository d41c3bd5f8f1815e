// The test double (issues 23, 40): how long the testing helper takes to start and stop a server, a reset to the
// demo world and to empty, and a restore of a snapshot of 1,000 issues (with their activity:
// outbox rows, notification threads). Each figure is the median of several runs, as the server
// itself reports it (`took_ms`) or, for the start, as the caller sees it.
import { startCodehost } from '../src/testing-helper.ts';

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

export default async function testDouble(options: { env?: Record<string, string> } = {}): Promise<Record<string, number | string>> {
  const postgres = Boolean(options.env?.DATABASE_URL);
  const results: Record<string, number | string> = { database: postgres ? 'postgres' : 'sqlite' };
  // Each figure is printed as it is measured too: a slow machine shows how far the run got.
  const note = (key: string, value: number | string) => {
    results[key] = value;
    console.error(`test-double: ${key}: ${value}`);
  };
  if (postgres) process.env.DATABASE_URL = options.env!.DATABASE_URL;

  // The helper's start: a fresh database (migrated), the server listening, the admin API answering.
  // BENCH_HELPER_STARTS: how many starts the median is of (5).
  const startRuns = Number(process.env.BENCH_HELPER_STARTS ?? 5);
  const starts: number[] = [];
  // The stop of each of those starts, as the caller sees it: its admin call left a kept-alive
  // connection idle, which the stop closes (after the helper's grace) before it returns.
  const stops: number[] = [];
  // On PostgreSQL each start makes its own database on the server (a copy of the migrated template
  // database, made by the first start) and stop drops it.
  const databaseUrl = postgres ? options.env!.DATABASE_URL : undefined;
  for (let i = 0; i < startRuns; i++) {
    const started = performance.now();
    const codehost = await startCodehost({ databaseUrl });
    await codehost.admin('GET', '/clock');
    starts.push(performance.now() - started);
    const stopping = performance.now();
    await codehost.stop();
    stops.push(performance.now() - stopping);
  }
  note(`helper start ms (median of ${startRuns})`, Math.round(median(starts)));
  note(`helper stop ms (median of ${startRuns})`, Math.round(median(stops)));

  const codehost = await startCodehost({ databaseUrl });
  try {
    const took = async (path: string, body: object) => (await codehost.admin('POST', path, body)).took_ms as number;
    note('first reset to demo ms (loads demo.yaml)', await took('/reset', { to: 'demo' }));
    const demo: number[] = [];
    for (let i = 0; i < 10; i++) demo.push(await took('/reset', { to: 'demo' }));
    note('reset to demo ms (median of 10)', median(demo));
    const empty: number[] = [];
    for (let i = 0; i < 10; i++) empty.push(await took('/reset', {}));
    note('reset to empty ms (median of 10)', median(empty));

    const issues = Array.from({ length: 1000 }, (_, i) => ({ repository: 'acme/big', author: i % 2 ? 'mona' : 'hubot', title: `Issue ${i}`, body: `@mona number ${i}` }));
    await codehost.reset({ seed: { users: [{ login: 'mona' }, { login: 'hubot' }], orgs: [{ login: 'acme', owners: ['mona'], members: ['hubot'] }], repos: [{ owner: 'acme', name: 'big' }], issues } });
    await codehost.drain();
    const saved = await codehost.admin('POST', '/snapshots', { name: 'thousand' });
    note('1,000-issue snapshot bytes', saved.bytes);
    const restores: number[] = [];
    for (let i = 0; i < 10; i++) {
      await took('/reset', {});
      restores.push(await took('/snapshots/thousand/restore', {}));
    }
    note('restore 1,000-issue snapshot ms (median of 10)', median(restores));
  } finally {
    await codehost.stop();
  }
  return results;
}
