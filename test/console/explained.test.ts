// The console explains the journal (docs/testing.md "The console: `/_console`"), in Chromium
// (playwright-core): the journal filtered by app, installation, token, operation, status and warning;
// an entry opened as its request and answer side by side; a 403 shown (its explanation when the
// journal gives one); an injected fault (src/testing/faults.ts) marked; a delivery showing the calls
// its installation made after it; the permissions-used panel of an app that used less than it was
// granted. A favicon, no console error or page error, no answer of 400 or more to the page, and every
// call of the page to /_admin sends `X-Codehost-Console: 1`.
//
// Guarded until the journal gives them (the lead tightens these once it does): the `injected_fault`
// and `unserved_operation` warnings, an entry's `explanation`, and GET /_admin/requests/permissions-used.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { until } from '../clients/tools.ts';
import { inChromium, skip } from './chromium.ts';
import { install, mintInstallationToken } from '../helpers/app-credentials.ts';
import { classicToken, type TestApp } from '../helpers/credentials.ts';
import { ADMIN_TOKEN } from '../helpers/server.ts';


interface Entry {
  id: number;
  path: string;
  method: string;
  operation: string | null;
  status: number;
  credential: { installation: number | null };
  warnings: { code: string }[];
  explanation?: { reason: string };
}

describe('the console explains the journal, in Chromium', { skip }, () => {
  const chromiumWorld = inChromium();

  test('filters, an entry side by side, a 403 and a fault marked, a delivery\'s calls, permissions used', async () => {
    const { server, receiver, browser } = chromiumWorld;
    // An app that asks for issues: write and contents: read, installed with issues: read.
    await server.admin('POST', '/users', { login: 'octo' });
    await server.admin('POST', '/repos', { owner: 'octo', name: 'tools' });
    const app: TestApp = await server.admin('POST', '/apps', {
      slug: 'reader', owner: 'octo', permissions: { metadata: 'read', issues: 'write', contents: 'read' }, events: ['issues'],
      webhook: { url: receiver.url('/hook'), secret: 'whsec-explained-0123456789abcdef' },
    });
    const installation = await install(server, app, 'octo', { permissions: { metadata: 'read', issues: 'read', contents: 'read' } });
    await server.admin('POST', '/repos/octo/tools/issues', { author: 'octo', title: 'Wobbly widgets' });
    await server.drain();
    // After the delivery: the installation reads the issue, is refused what needs administration
    // (403), meets an injected fault (503) and calls a route codehost does not serve (404).
    const token = await mintInstallationToken(server, app, installation);
    assert.equal((await server.api('GET', '/repos/octo/tools/issues/1', { token })).status, 200);
    assert.equal((await server.api('GET', '/repos/octo/tools/code-security-configuration', { token })).status, 403);
    await server.admin('POST', '/faults', { effect: 'status', status: 503, match: { method: 'GET', path: '/repos/octo/tools' }, times: 1 });
    assert.equal((await server.api('GET', '/repos/octo/tools', { token })).status, 503);
    assert.equal((await server.api('GET', '/repos/octo/tools/no-such-thing', { token })).status, 404);
    // A personal token's call, told apart by the token's last characters.
    const personal = await classicToken(server, 'octo', ['repo']);
    assert.equal((await server.api('GET', '/user', { token: personal })).status, 200);
    const journal = (await server.admin('GET', '/requests?per_page=1000')) as Entry[];
    const refused = journal.find((entry) => entry.status === 403)!;
    const faulted = journal.find((entry) => entry.status === 503)!;
    const unserved = journal.find((entry) => entry.path.endsWith('/no-such-thing'))!;
    assert.ok(refused && faulted && unserved);
    const permissionsUsed = await server.adminRaw('GET', '/requests/permissions-used?app=reader');

    const page = await browser.newPage();
    const seen: string[] = [];
    const errors: string[] = [];
    const adminCalls: { url: string; marked: string | undefined }[] = [];
    page.on('console', (message) => {
      seen.push(`console.${message.type()}: ${message.text()}`);
      if (message.type() === 'error') errors.push(message.text());
    });
    page.on('pageerror', (error) => errors.push(`page error: ${error.message}`));
    page.on('request', (request) => {
      if (new URL(request.url()).pathname.startsWith('/_admin')) adminCalls.push({ url: request.url(), marked: request.headers()['x-codehost-console'] });
    });
    page.on('response', (response) => {
      if (response.status() >= 400) errors.push(`${response.status()} ${response.request().method()} ${response.url()}`);
    });
    const text = async (selector: string) => (await page.locator(selector).first().textContent()) ?? '';
    const rows = () => page.locator('#journal-rows tr').allTextContents();
    const filter = async (fields: Record<string, string>) => {
      for (const name of ['app', 'installation', 'token', 'operation', 'status', 'method', 'path', 'login']) await page.fill(`#journal-filter [name="${name}"]`, fields[name] ?? '');
      await page.selectOption('#journal-filter [name="warning"]', fields.warning ?? '');
      await page.click('#journal-filter button[type="submit"]');
    };

    try {
      await page.goto(`${server.url}/_console`);
      await page.fill('#signin-token', ADMIN_TOKEN);
      await page.press('#signin-token', 'Enter');
      await until('the journal', async () => (await text('#journal-rows')).includes('GET /user'), seen);

      // A favicon the page links to, served.
      const icon = await page.locator('link[rel="icon"]').getAttribute('href');
      assert.ok(icon, 'the page links a favicon');
      const served = await fetch(new URL(icon, page.url()));
      assert.equal(served.status, 200);
      assert.match(served.headers.get('content-type') ?? '', /^image\//);
      assert.match(await served.text(), /<svg/);

      // By app: only the app's calls (its JWT's and its installation's).
      await filter({ app: 'reader' });
      await until('the app\'s calls', async () => {
        const found = await rows();
        return found.length >= 4 && found.every((row) => row.includes('reader')) && !found.some((row) => row.includes('GET /user'));
      }, seen);
      // By installation and status: the one refused write.
      await filter({ installation: String(installation), status: '403' });
      await until('the 403', async () => {
        const found = await rows();
        return found.length === 1 && found[0]!.includes('GET /repos/octo/tools/code-security-configuration') && found[0]!.includes('403 Forbidden');
      }, seen);
      // Opened: the request and the answer side by side, headers as a table, bodies; not raw JSON.
      await page.locator('#journal-rows tr').first().getByRole('button', { name: /Open request/ }).click();
      const request = page.locator('#journal-entry .side[aria-label="Request"]');
      const answer = page.locator('#journal-entry .side[aria-label="Answer"]');
      await until('the entry opened', async () => (await request.count()) === 1 && (await answer.count()) === 1, seen);
      assert.match((await request.textContent()) ?? '', /GET \/repos\/octo\/tools\/code-security-configuration[\s\S]*installation[\s\S]*Request headers[\s\S]*authorization[\s\S]*Request body[\s\S]*\(empty\)/);
      assert.match((await answer.textContent()) ?? '', /403 Forbidden[\s\S]*Answer headers[\s\S]*content-type[\s\S]*Answer body[\s\S]*Resource not accessible/);
      const [left, right] = await Promise.all([request.boundingBox(), answer.boundingBox()]);
      assert.ok(left && right && left.x < right.x && Math.abs(left.y - right.y) < 2, 'side by side');
      assert.ok(!(await text('#journal-entry')).includes(personal) && !(await text('#journal-entry')).includes(token), 'no token shown');
      assert.ok(refused.explanation, 'the journal explains the 403');
      assert.match(await text('#journal-entry .explanation'), new RegExp(`Why[\\s\\S]*Needed[\\s\\S]*Held`));
      assert.ok((await text('#journal-entry .explanation')).includes(refused.explanation.reason));
      assert.match(await text('#journal-rows'), /explained/);

      // By operation: the calls of the 403's operation only.
      await filter({ operation: refused.operation! });
      await until('the operation\'s calls', async () => {
        const found = await rows();
        return found.length >= 1 && found.every((row) => row.includes(refused.operation!));
      }, seen);
      // By status: the injected fault's 503, marked when the journal says it was injected.
      await filter({ status: '5xx' });
      await until('the fault', async () => {
        const found = await rows();
        return found.length === 1 && found[0]!.includes('GET /repos/octo/tools') && found[0]!.includes('503 Service Unavailable');
      }, seen);
      assert.ok(faulted.warnings.some((warning) => warning.code === 'injected_fault'), 'the journal marks the fault');
      assert.match((await rows())[0]!, /fault injected/);
      await filter({ warning: 'injected_fault' });
      await until('the faults', async () => (await rows()).length === 1 && (await rows())[0]!.includes('fault injected'), seen);
      assert.ok(unserved.warnings.some((warning) => warning.code === 'unserved_operation'), 'the journal marks the unserved call');
      await filter({ warning: 'unserved_operation' });
      await until('the unserved call', async () => (await rows()).length === 1 && (await rows())[0]!.includes('not served'), seen);
      // By warning: every public call here sent no X-Vendor-Api-Version.
      await filter({ warning: 'missing_api_version', app: 'reader' });
      await until('the warned calls', async () => {
        const found = await rows();
        return found.length >= 4 && found.every((row) => row.includes('missing_api_version'));
      }, seen);
      // By token: the personal token's last eight characters.
      await filter({ token: personal.slice(-8) });
      await until('the token\'s calls', async () => {
        const found = await rows();
        return found.length === 1 && found[0]!.includes('GET /user');
      }, seen);
      await filter({});

      // The delivery of the issue, and the calls its installation made after it, oldest first.
      await page.selectOption('#deliveries-app', 'reader');
      await page.click('#deliveries-form button[type="submit"]');
      const issueRow = page.locator('#deliveries-rows tr', { hasText: 'issues.opened' });
      await until('the delivery', async () => (await issueRow.count()) === 1, seen);
      await issueRow.getByRole('button', { name: /Open delivery/ }).click();
      const calls = page.locator('#delivery .calls');
      await until('the calls after it', async () => (await calls.count()) === 1 && (await calls.locator('tbody tr').count()) >= 3, seen);
      assert.match(await text('#delivery .calls h4'), new RegExp(`Calls installation ${installation} made after it`));
      const after = await calls.locator('tbody tr').allTextContents();
      const order = [/GET \/repos\/octo\/tools\/issues\/1.*200/, /GET \/repos\/octo\/tools\/code-security-configuration.*403/, /GET \/repos\/octo\/tools[^/].*503/];
      // The unserved call, recorded with its credential.
      assert.equal(unserved.credential.installation, installation);
      order.push(/GET \/repos\/octo\/tools\/no-such-thing.*404/);
      const at = order.map((line) => after.findIndex((row) => line.test(row)));
      assert.ok(at.every((index, i) => index >= 0 && (i === 0 || index > at[i - 1]!)), after.join('\n'));
      assert.ok(!after.some((row) => row.includes('GET /user')), 'not the personal token\'s call');
      // One of them opened in place.
      await calls.locator('tbody tr', { hasText: 'code-security-configuration' }).getByRole('button', { name: /Open request/ }).click();
      await until('the call opened', async () => (await text('#delivery .calls-entry .side[aria-label="Answer"]')).includes('403 Forbidden'), seen);

      // Permissions used: the app was granted more than its calls needed (issues: write asked, contents: read granted).
      assert.equal(permissionsUsed.status, 200);
      await page.selectOption('#permissions-app', 'reader');
      await page.click('#permissions-form button[type="submit"]');
      await until('the permissions used', async () => (await text('#permissions-view')).includes('Permissions used'), seen);
      const panel = await text('#permissions-view');
      assert.match(panel, /issues/);
      assert.match(panel, /unused: can be dropped/);

      assert.deepEqual(errors, [], seen.join('\n'));
      assert.ok(adminCalls.length > 0);
      assert.deepEqual(adminCalls.filter((call) => call.marked !== '1'), [], 'every call of the console to /_admin says X-Codehost-Console: 1');
    } finally {
      await page.close();
    }
  });
});
