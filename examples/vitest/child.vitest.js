// The child mode under vitest: the server on codehost's pinned Node.js 24, so vitest itself may run
// on a Node that has no node:sqlite (Node 20).
import { afterAll, beforeAll, expect, test } from 'vitest';
import { startCodehost } from 'codehost/testing/child';

let codehost;
beforeAll(async () => {
  codehost = await startCodehost({ demo: true });
});
afterAll(() => codehost.stop());

test('the demo world answers from the child process', async () => {
  const response = await fetch(`${codehost.apiUrl}/users/mona`, { headers: { 'x-vendor-api-version': '2022-11-28' } });
  expect(response.status).toBe(200);
  expect(await codehost.count({ path: '/users/mona', status: 200 })).toBe(1);
});
