// The console at /_console (admin-api.md "Test support", docs/testing.md): the page, its module and
// its style sheet with a Content-Security-Policy that allows no inline script or style; 404 in
// production mode unless CODEHOST_CONSOLE=1; and in Chromium (playwright-core), signed in with the
// admin token and used panel by panel, keyboard first: the world (users, orgs, teams, repos, apps,
// installations, tokens) and its create forms, the journal
// (live, filtered, an entry opened), a delivery opened and redelivered to a loopback receiver, a
// notification, a fault added and cleared, the clock moved, a snapshot saved and restored, a reset.
// No console error, no request leaving loopback, and no token, secret or key the test made in the
// HTML or in any response the page fetched (but the one-time answer of the create that made it).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { until } from '../clients/tools.ts';
import { inChromium, skip } from './chromium.ts';
import { ADMIN_TOKEN, startServer, type TestServer } from '../helpers/server.ts';

const PAGES = ['/_console', '/_console/console.js', '/_console/common.js', '/_console/requests-panel.js', '/_console/console.css', '/_console/favicon.svg'];
const SCRIPTS = PAGES.filter((path) => path.endsWith('.js'));

describe('the console over HTTP', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer();
  });
  after(() => server.close());

  test('the page, its module and style sheet, with a CSP that allows no inline script or style', async () => {
    for (const path of PAGES) {
      const response = await fetch(`${server.url}${path}`);
      assert.equal(response.status, 200, path);
      const csp = response.headers.get('content-security-policy') ?? '';
      assert.match(csp, /default-src 'self'/);
      assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval|\*/, csp);
      assert.match(csp, /frame-ancestors 'none'/);
      assert.equal(response.headers.get('x-content-type-options'), 'nosniff');
      assert.equal(response.headers.get('cache-control'), 'no-store');
      assert.equal(response.headers.get('set-cookie'), null);
      await response.text();
    }
    const html = await (await fetch(`${server.url}/_console`)).text();
    assert.match(html, /<script type="module" src="\/_console\/console\.js"><\/script>/);
    // Every script has a src, and there is no style element, style attribute or event handler attribute.
    assert.doesNotMatch(html, /<script(?![^>]*\bsrc=)[^>]*>/);
    assert.doesNotMatch(html, /<style|\sstyle=|\son[a-z]+=/i);
    assert.doesNotMatch(html, /https?:\/\//, 'nothing from another origin');
    assert.match(html, /<link rel="icon" href="\/_console\/favicon\.svg"/);
    for (const path of SCRIPTS) {
      const script = await (await fetch(`${server.url}${path}`)).text();
      assert.doesNotMatch(script, /https?:\/\/|innerHTML|document\.cookie|localStorage/, path);
    }
    // Every admin call of the page says it is the console's (the journal leaves those out).
    assert.match(await (await fetch(`${server.url}/_console/common.js`)).text(), /'x-codehost-console': '1'/);
    const icon = await fetch(`${server.url}/_console/favicon.svg`);
    assert.equal(icon.headers.get('content-type'), 'image/svg+xml');
    assert.match(await icon.text(), /^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg"/);
  });

  test('the page holds no data: the admin API behind it still wants the admin token', async () => {
    assert.equal((await fetch(`${server.url}/_admin/users`)).status, 401);
  });
});

describe('the console in production mode', () => {
  test('404 unless CODEHOST_CONSOLE=1', async () => {
    const off = await startServer({ CODEHOST_MODE: 'production' });
    try {
      for (const path of PAGES) assert.equal((await fetch(`${off.url}${path}`)).status, 404, path);
    } finally {
      await off.close();
    }
    const on = await startServer({ CODEHOST_MODE: 'production', CODEHOST_CONSOLE: '1' });
    try {
      for (const path of PAGES) assert.equal((await fetch(`${on.url}${path}`)).status, 200, path);
    } finally {
      await on.close();
    }
  });

  test('CODEHOST_CONSOLE=0 turns it off in laptop mode', async () => {
    const off = await startServer({ CODEHOST_CONSOLE: '0' });
    try {
      assert.equal((await fetch(`${off.url}/_console`)).status, 404);
    } finally {
      await off.close();
    }
  });
});


describe('the console in Chromium', { skip }, () => {
  const chromiumWorld = inChromium();

  test('every panel used, keyboard first: no console error, nothing off loopback, no secret shown', async () => {
    const { server, receiver, browser } = chromiumWorld;
    // The world the test makes through the admin API, with every kind of secret.
    const webhookSecret = 'whsec-console-test-0123456789abcdef';
    await server.admin('POST', '/users', { login: 'octo', name: 'Octo Cat' });
    const token = (await server.admin('POST', '/tokens', { login: 'octo', kind: 'classic', scopes: ['repo'] })).token as string;
    const app = await server.admin('POST', '/apps', {
      slug: 'hooks', name: 'Hooks', owner: 'octo', permissions: { issues: 'write' }, events: ['issues'],
      webhook: { url: receiver.url('/hook'), secret: webhookSecret },
    });
    await server.admin('POST', '/repos', { owner: 'octo', name: 'tools' });
    await server.admin('POST', '/apps/hooks/installations', { account: 'octo' });
    const secrets: Record<string, string> = {
      'the personal token': token,
      'the client secret': app.client_secret,
      'the private key': app.private_key,
      "the private key's middle": (app.private_key as string).split('\n').slice(2, 3).join(''),
      'the webhook secret': webhookSecret,
    };
    for (const [name, value] of Object.entries(secrets)) assert.ok(value && value.length >= 16, name);
    assert.equal((await server.api('GET', '/user', { token })).status, 200);
    await server.admin('POST', '/repos/octo/tools/issues', { author: 'octo', title: 'Wobbly widgets' });
    await server.drain();
    // Creating the app pinged its webhook, installing sent it `installation` `created`, and the issue
    // was delivered (each once; deliveries of separate writes may arrive in any order).
    assert.deepEqual(receiver.on('/hook').map((r) => String(r.headers['x-vendor-event'])).sort(), ['installation', 'issues', 'ping'], 'the issue was delivered');

    const page = await browser.newPage();
    const seen: string[] = [];
    const errors: string[] = [];
    const offLoopback: string[] = [];
    const bodies: { method: string; url: string; body: string }[] = [];
    page.on('console', (message) => {
      seen.push(`console.${message.type()}: ${message.text()}`);
      if (message.type() === 'error') errors.push(message.text());
    });
    page.on('pageerror', (error) => errors.push(`page error: ${error.message}`));
    page.on('response', async (response) => {
      if (response.status() >= 400) seen.push(`${response.status()} ${response.request().method()} ${response.url()}: ${await response.text().catch(() => '')}`);
      try {
        bodies.push({ method: response.request().method(), url: response.url(), body: (await response.body()).toString('utf8') });
      } catch {
        // a body gone with a navigation: nothing to read
      }
    });
    await page.route('**/*', (route) => {
      const host = new URL(route.request().url()).hostname;
      if (host === '127.0.0.1' || host === 'localhost' || host === '[::1]') return route.continue();
      offLoopback.push(route.request().url());
      return route.abort();
    });
    const text = async (selector: string) => (await page.locator(selector).textContent()) ?? '';

    try {
      await page.goto(`${server.url}/_console`);
      // Sign in with the keyboard: the token field has the focus.
      await page.keyboard.type(ADMIN_TOKEN);
      await page.keyboard.press('Enter');
      await until('the users list', async () => (await text('#world-lists')).includes('octo'), seen);
      assert.equal(await page.evaluate(() => sessionStorage.getItem('codehost.adminToken')), ADMIN_TOKEN);
      assert.deepEqual(await page.context().cookies(), []);
      assert.ok(!page.url().includes(ADMIN_TOKEN));

      // The world: a token first (its one-time value is shown once), then a user, org, team and repository.
      const create = async (kind: string, fields: Record<string, string>) => {
        const form = page.locator(`form[data-create="${kind}"]`);
        for (const [name, value] of Object.entries(fields)) {
          const field = form.locator(`[name="${name}"]`);
          if (await field.evaluate((node) => node.tagName === 'SELECT')) await field.selectOption(value);
          else await field.fill(value);
        }
        await form.locator(`[name="${Object.keys(fields)[0]}"]`).press('Enter');
        await until(`the ${kind} create answer`, async () => (await text('#created')).includes(`Created (${kind})`), seen);
      };
      await create('tokens', { login: 'octo', kind: 'classic', scopes: 'repo, read:org', note: 'from the console' });
      const shown = JSON.parse(await text('#created pre')) as { token: string };
      assert.match(shown.token, /^chp_/);
      assert.match(await text('#created'), /shown this once/);
      await create('users', { login: 'hubot', name: 'Hubot' });
      await create('orgs', { login: 'acme', owners: 'octo', members: 'hubot' });
      await create('teams', { org: 'acme', slug: 'core', name: 'Core team', members: 'hubot' });
      await create('repos', { owner: 'acme', name: 'widgets', visibility: 'private' });
      await until('the new rows', async () => {
        const world = await text('#world-lists');
        return world.includes('hubot') && world.includes('acme/widgets') && world.includes('from the console');
      }, seen);
      // The installation made with the keyboard only: its fields and its button reached with Tab.
      await page.focus('form[data-create="installations"] [name="app"]');
      await page.keyboard.type('hooks');
      await page.keyboard.press('Tab');
      await page.keyboard.type('acme');
      await page.keyboard.press('Tab');
      await page.keyboard.type('widgets');
      await page.keyboard.press('Tab');
      assert.equal(await page.locator(':focus').textContent(), 'Install app');
      await page.keyboard.press('Enter');
      await until('the installations create answer', async () => (await text('#created')).includes('Created (installations)'), seen);
      // The teams (per organization) and installations (per app) lists.
      const listRows = async (title: string) =>
        (await page.locator('#world-lists table', { has: page.locator('caption', { hasText: new RegExp(`^${title} \\(`) }) }).locator('tbody tr').allTextContents());
      await until('the team and installation listed', async () => (await listRows('Installations')).length === 2, seen);
      assert.deepEqual(await listRows('Teams'), ['acmecoreCore team']);
      const installations = await listRows('Installations');
      assert.match(installations[0]!, /^hooks\d+octoallno$/);
      assert.match(installations[1]!, /^hooks\d+acmeselectedno$/);
      assert.match(await text('#world-lists'), /Teams \(1\)[\s\S]*Installations \(2\)/);

      // The journal: live (an API call made now appears), filtered, an entry opened.
      assert.equal((await server.api('GET', '/repos/octo/tools', { token })).status, 200);
      await until('the live journal', async () => (await text('#journal-rows')).includes('GET /repos/octo/tools'), seen);
      await page.fill('#journal-filter [name="login"]', 'octo');
      await page.press('#journal-filter [name="login"]', 'Enter');
      await until('the filtered journal', async () => {
        const rows = await page.locator('#journal-rows tr').allTextContents();
        return rows.length >= 2 && rows.every((row) => row.includes('octo'));
      }, seen);
      const entry = page.locator('#journal-rows tr', { hasText: 'GET /repos/octo/tools' }).getByRole('button', { name: /Open request/ });
      await entry.focus();
      await page.keyboard.press('Enter');
      await until('the opened entry', async () => /Request headers[\s\S]*Request body[\s\S]*Answer headers[\s\S]*Answer body/.test(await text('#journal-entry')), seen);
      assert.match(await text('#journal-entry'), /personal_access_token|classic/);
      await page.fill('#journal-filter [name="login"]', '');
      await page.press('#journal-filter [name="login"]', 'Enter');

      // Deliveries: the issue's delivery opened (payload, signature, the receiver's answer), then redelivered.
      await page.selectOption('#deliveries-app', 'hooks');
      await page.click('#deliveries-form button[type="submit"]');
      const issueRows = page.locator('#deliveries-rows tr', { hasText: 'issues.opened' });
      await until('the delivery', async () => (await issueRows.count()) === 1, seen);
      const issueRow = issueRows.first();
      await issueRow.getByRole('button', { name: /Open delivery/ }).click();
      await until('the opened delivery', async () => (await text('#delivery')).includes('Wobbly widgets'), seen);
      const delivery = await text('#delivery');
      assert.match(delivery, /x-hub-signature-256[\s\S]*sha256=[0-9a-f]{64}/i);
      assert.match(delivery, /Receiver answered\s*200/);
      assert.ok(delivery.includes(receiver.url('/hook')));
      await issueRow.getByRole('button', { name: /Redeliver delivery/ }).click();
      const issuePosts = () => receiver.on('/hook').filter((r) => r.headers['x-vendor-event'] === 'issues');
      await until('the redelivery', async () => issuePosts().length === 2 && (await issueRows.count()) === 2, seen, 30_000);
      assert.equal(issuePosts()[1]!.headers['x-vendor-delivery'], issuePosts()[0]!.headers['x-vendor-delivery'], 'the same guid');
      assert.match(await text('#deliveries-rows'), /yes/);

      // Notifications: a thread for octo, read back through the API with octo's token.
      await page.fill('#notify [name="login"]', 'octo');
      await page.fill('#notify [name="repository"]', 'octo/tools');
      await page.fill('#notify [name="title"]', 'Release 2.0 is out');
      await page.fill('#notify [name="url"]', `${server.apiUrl}/repos/octo/tools/releases/1`);
      await page.selectOption('#notify [name="reason"]', 'subscribed');
      await page.press('#notify [name="url"]', 'Enter');
      await until('the thread', async () => (await text('#notified')).includes('Release 2.0 is out'), seen);
      const threads = await server.api('GET', '/notifications', { token });
      assert.ok((threads.body as { subject: { title: string } }[]).some((thread) => thread.subject.title === 'Release 2.0 is out'));

      // Faults: one added (GET /user answers 503 to the API), listed, cleared.
      await page.selectOption('#fault-form [name="effect"]', 'status');
      await page.fill('#fault-form [name="status"]', '503');
      await page.fill('#fault-form [name="method"]', 'GET');
      await page.fill('#fault-form [name="path"]', '/user');
      await page.fill('#fault-form [name="times"]', '5');
      await page.press('#fault-form [name="path"]', 'Enter');
      await until('the fault listed', async () => /status 503 on method GET, path \/user/.test(await text('#faults-list')), seen);
      assert.equal((await server.api('GET', '/user', { token })).status, 503);
      await page.click('#faults-clear');
      await until('the faults cleared', async () => (await page.locator('#faults-list li').count()) === 0, seen);
      assert.equal((await server.api('GET', '/user', { token })).status, 200);

      // The clock: moved a day forward.
      const before = Date.parse(await text('#clock-now'));
      await page.fill('#clock-form [name="advance_seconds"]', '86400');
      await page.press('#clock-form [name="advance_seconds"]', 'Enter');
      await until('the clock moved', async () => Date.parse(await text('#clock-now')) - before >= 86_400_000, seen);

      // Snapshots: saved, a user made after it, restored (the user gone), then a reset to empty.
      await page.fill('#snapshot-form [name="name"]', 'before-later');
      await page.press('#snapshot-form [name="name"]', 'Enter');
      await until('the snapshot listed', async () => (await text('#snapshots-list')).includes('before-later'), seen);
      await create('users', { login: 'later' });
      await until('the later user', async () => (await text('#world-lists')).includes('later'), seen);
      await page.getByRole('button', { name: 'Restore snapshot before-later' }).click();
      await until('the restore', async () => /Restored before-later in \d+ ms/.test(await text('#status')), seen);
      assert.ok(!(await text('#world-lists')).includes('later'));
      assert.ok((await text('#world-lists')).includes('hubot'));
      await page.selectOption('#reset-form [name="to"]', 'empty');
      await page.click('#reset-form button[type="submit"]');
      await until('the reset', async () => /Reset in \d+ ms/.test(await text('#status')), seen);
      assert.match(await text('#world-lists'), /Users \(0\)/);

      // Signing out forgets the token.
      await page.click('#signout');
      assert.equal(await page.evaluate(() => sessionStorage.getItem('codehost.adminToken')), null);

      assert.deepEqual(errors, [], seen.join('\n'));
      assert.deepEqual(offLoopback, []);
      // No secret in the page or in what it fetched; the console's token only in the answer that made it.
      const html = await page.content();
      const made = bodies.filter(({ method, url }) => method === 'POST' && new URL(url).pathname === '/_admin/tokens');
      assert.equal(made.length, 1);
      assert.ok(made[0]!.body.includes(shown.token));
      for (const [name, value] of Object.entries({ ...secrets, "the console's token": shown.token })) {
        assert.ok(!html.includes(value), `${name} is in the page`);
        for (const { method, url, body } of bodies) {
          if (value === shown.token && made[0]!.url === url && method === 'POST') continue;
          assert.ok(!body.includes(value), `${name} is in the answer to ${method} ${url}`);
        }
      }
      // The journal the page fetched had the creates that answered with secrets (masked there).
      assert.ok(bodies.some(({ url, body }) => url.includes('/_admin/requests') && body.includes('"path":"/_admin/apps"') && body.includes('"path":"/_admin/tokens"')), 'the journal was fetched and searched');
    } finally {
      await page.close();
    }
  });
});
