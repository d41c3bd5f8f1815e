// SIGTERM with keep-alive clients: requests already sent are answered (never ECONNRESET), each
// response after the signal says `Connection: close`, new connections are refused, and the process
// exits once the last request is done. Both databases.
import assert from 'node:assert/strict';
import { Agent, request } from 'node:http';
import { after, before, test } from 'node:test';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { eventually, freePort, spawnServe } from '../helpers/process.ts';

const ADMIN_TOKEN = 'shutdown-admin-token';
let database: TestDatabase;

before(async () => {
  database = await createTestDatabase();
});

after(async () => {
  await database.drop();
});

interface Outcome {
  status?: number;
  connection?: string;
  error?: string;
  /** The request went out on a connection that had already served one. */
  reused: boolean;
  sentAt: number;
}

function get(port: number, agent: Agent, path: string): Promise<Outcome> {
  return new Promise((resolve) => {
    const sentAt = Date.now();
    const req = request({ host: '127.0.0.1', port, path, agent, headers: { authorization: `Bearer ${ADMIN_TOKEN}` } }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode, connection: res.headers.connection, reused: req.reusedSocket, sentAt }));
      res.on('error', (error: NodeJS.ErrnoException) => resolve({ error: error.code ?? error.message, reused: req.reusedSocket, sentAt }));
    });
    req.on('error', (error: NodeJS.ErrnoException) => resolve({ error: error.code ?? error.message, reused: req.reusedSocket, sentAt }));
    req.end();
  });
}

test('SIGTERM with keep-alive clients in flight: every request already sent is answered, then the process exits', { timeout: 60_000 }, async (t) => {
  const port = await freePort();
  const child = spawnServe({ port, database, adminToken: ADMIN_TOKEN, env: { CODEHOST_LOG_LEVEL: 'fatal', CODEHOST_RATE_LIMIT_ANONYMOUS: '1000000' } });
  const exited = new Promise<number | string>((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal ?? -1)));
  const agent = new Agent({ keepAlive: true, maxSockets: 8 });
  try {
    assert.ok(await eventually(async () => (await get(port, agent, '/healthz')).status === 200, 30), 'the server did not start');
    const outcomes: Outcome[] = [];
    let signalledAt = Infinity;
    let stop = false;
    // Eight keep-alive connections, each sending its next request as soon as the last is answered.
    const loops = Array.from({ length: 8 }, async () => {
      while (!stop) {
        const outcome = await get(port, agent, '/_admin/users?per_page=100');
        outcomes.push(outcome);
        if (outcome.error) break;
      }
    });
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    signalledAt = Date.now();
    child.kill('SIGTERM');
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    stop = true;
    await Promise.all(loops);
    assert.equal(await exited, 0);

    const before = outcomes.filter((o) => o.sentAt < signalledAt);
    const afterSignal = outcomes.filter((o) => o.sentAt >= signalledAt);
    t.diagnostic(`${before.length} requests before the signal, ${afterSignal.length} after: ${JSON.stringify(afterSignal.map((o) => o.status ?? o.error))}`);
    // Sent before the signal: answered 200, whatever moment the signal came.
    assert.deepEqual(before.filter((o) => o.status !== 200).map((o) => o.status ?? o.error), []);
    // Sent after it: answered (on a kept-alive connection: with Connection: close once the signal
    // was handled), or refused when it needed a new connection; never reset.
    for (const o of afterSignal) {
      if (o.error) assert.equal(o.error, 'ECONNREFUSED', `a request sent after the signal failed with ${o.error} (reused connection: ${o.reused})`);
      else assert.equal(o.status, 200);
    }
    // Once the signal was handled, answers said `Connection: close` — on a slow machine all of them may
    // be answers to requests sent just before it (every loop then finds its connection closed).
    assert.ok(outcomes.some((o) => o.connection === 'close'), 'no response said Connection: close');
    // New connections are refused once the signal has been handled.
    assert.equal((await get(port, new Agent(), '/healthz')).error, 'ECONNREFUSED');
  } finally {
    agent.destroy();
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  }
});
