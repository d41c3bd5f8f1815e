// Writes that race (issue 12): concurrent requests over real HTTP that each read something and then
// write from it. The database makes each safe (an atomic counter, a constraint, ON CONFLICT, a row
// lock), so every request gets its right answer and nothing is doubled, lost or skipped.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startServer, type TestServer } from './helpers/server.ts';

const CONCURRENCY = 64;

describe('issue numbers', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer({ CODEHOST_RATE_LIMIT_ANONYMOUS: '1000' });
    await server.admin('POST', '/users', { login: 'mona' });
    await server.admin('POST', '/repos', { owner: 'mona', name: 'busy' });
    await server.admin('POST', '/repos', { owner: 'mona', name: 'quiet' });
  });
  after(() => server?.close());

  test(`${CONCURRENCY} concurrent issues and pull requests in one repository get the numbers 1..${CONCURRENCY}`, async () => {
    const responses = await Promise.all(
      Array.from({ length: CONCURRENCY }, (_, i) =>
        server.adminRaw('POST', '/repos/mona/busy/issues', { author: 'mona', title: `race ${i}`, pull_request: i % 3 === 0 }),
      ),
    );
    assert.deepEqual(responses.map((r) => r.status).filter((s) => s !== 201), [], responses.find((r) => r.status !== 201)?.text);
    const numbers = responses.map((r) => r.body.number as number).sort((a, b) => a - b);
    assert.deepEqual(numbers, Array.from({ length: CONCURRENCY }, (_, i) => i + 1));

    // The public API shows each of them under its number, and the next one continues the sequence.
    for (const response of responses) {
      const shown = await server.api('GET', `/repos/mona/busy/issues/${response.body.number}`);
      assert.equal(shown.status, 200, shown.text);
      assert.equal(shown.body.title, response.body.title);
    }
    const next = await server.admin('POST', '/repos/mona/busy/issues', { author: 'mona', title: 'after the race' });
    assert.equal(next.number, CONCURRENCY + 1);
    // Another repository has its own sequence.
    const other = await server.admin('POST', '/repos/mona/quiet/issues', { author: 'mona', title: 'first' });
    assert.equal(other.number, 1);
  });

  test('a creation that fails does not use up a number', async () => {
    const refused = await server.adminRaw('POST', '/repos/mona/quiet/issues', { author: 'mona', title: 'x', assignees: ['nobody-here'] });
    assert.equal(refused.status, 404, refused.text);
    const next = await server.admin('POST', '/repos/mona/quiet/issues', { author: 'mona', title: 'second' });
    assert.equal(next.number, 2);
  });
});
