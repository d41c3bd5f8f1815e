import { afterAll, afterEach, beforeAll, expect, test } from 'vitest';
import { Octokit } from '@octokit/core';
import { startCodehost } from 'codehost/testing';

let codehost;
let octokit;
beforeAll(async () => {
  codehost = await startCodehost({ demo: true });
  await codehost.snapshot('demo-world');
  octokit = new Octokit({
    baseUrl: codehost.apiUrl,
    auth: 'chp_DemoMonaClassicToken00000000013Mkcu6', // mona, in the demo data
    headers: { 'x-vendor-api-version': '2022-11-28' },
  });
});
afterEach(() => codehost.restore('demo-world', { journal: 'clear' }));
afterAll(() => codehost.stop());

test('my client reads the issue hubot opened, in one request', async () => {
  // The platform API creates no issue: the test makes it as the operator would.
  const { number } = await codehost.admin('POST', '/repos/acme/widgets/issues', {
    author: 'hubot', title: 'Widgets squeak', body: '@mona can you look?',
  });
  const { data } = await octokit.request('GET /repos/{owner}/{repo}/issues/{issue_number}', {
    owner: 'acme', repo: 'widgets', issue_number: number,
  });
  expect(data.title).toBe('Widgets squeak');
  expect(data.user.login).toBe('hubot');
  const calls = await codehost.requests({ path: '/api/v3/repos/acme/widgets/issues/*', login: 'mona' });
  expect(calls.map((call) => [call.method, call.status])).toEqual([['GET', 200]]);
  expect(await codehost.count({ login: 'mona' })).toBe(1);
});

test('each test starts from the demo world', async () => {
  expect(await codehost.count({ login: 'mona' })).toBe(0);
});
