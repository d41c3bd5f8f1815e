// A real browser (Debian's chromium, driven by playwright-core) against `codehost serve` started
// with the defaults and the demo data: the /docs page's Try-it panel, authorized with a token, runs
// GET /notifications; and docs/clients.md's browser page, served from another origin, calls the API
// with fetch and reads Link and X-RateLimit-Remaining (CORS).
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { chromium, type Browser, type Page } from 'playwright-core';
import { docExample, MONA_TOKEN } from '../clients/docs.ts';
import { chromiumPath, skipReason, startDemoServer, type DemoServer } from '../clients/tools.ts';

const executablePath = chromiumPath();
const skip = skipReason(executablePath, 'Chromium is not installed (Debian: apt-get install chromium; .ci/run installs it): the browser test is skipped');

/** What the page logged and threw, for the failure message. */
function watch(page: Page): string[] {
  const seen: string[] = [];
  page.on('console', (message) => seen.push(`console.${message.type()}: ${message.text()}`));
  page.on('pageerror', (error) => seen.push(`page error: ${error.message}`));
  page.on('requestfailed', (request) => seen.push(`request failed: ${request.method()} ${request.url()} (${request.failure()?.errorText})`));
  return seen;
}

describe('a browser', { skip }, () => {
  let server: DemoServer;
  let browser: Browser;

  before(async () => {
    server = await startDemoServer();
    browser = await chromium.launch({ executablePath: executablePath!, args: ['--no-sandbox'] });
  });
  after(async () => {
    await browser?.close();
    await server?.stop();
  });

  // needs the clients branch: absolute URLs from the printed address (the OpenAPI `servers` entry the
  // Try-it panel calls is http://localhost:PORT before it, another origin than http://127.0.0.1:PORT/docs)
  test('/docs: authorize with a token, run GET /notifications from the Try-it panel, see 200 and the body', async () => {
    const page = await browser.newPage();
    const seen = watch(page);
    try {
      await page.goto(`${server.address}/docs`);
      await page.click('button.authorize');
      const scheme = page.locator('.auth-container', { has: page.locator('h4', { hasText: /^token\b/ }) });
      await scheme.locator('input').fill(MONA_TOKEN);
      await scheme.locator('button.authorize').click();
      await page.click('button.btn-done');

      // Tags start folded (src/http/meta.ts): the notifications are the activity tag's.
      await page.click('.opblock-tag[data-tag="activity"]');
      const operation = page.locator('.opblock.opblock-get', { has: page.locator('.opblock-summary-path[data-path="/notifications"]') });
      assert.equal(await operation.count(), 1);
      await operation.locator('.opblock-summary').click();
      await operation.locator('button.try-out__btn').click();
      await operation.locator('button.execute').click();

      const response = operation.locator('.live-responses-table .response');
      await response.waitFor({ timeout: 30_000 });
      const status = (await response.locator('.response-col_status').textContent())?.trim();
      // A call that failed (no answer the browser may read) shows "Undocumented" and "Failed to fetch".
      if (status !== '200') assert.fail(`the panel shows ${status}: ${await response.locator('.response-col_description').textContent()}\n${seen.join('\n')}`);
      const body = (await response.locator('.response-col_description pre').first().textContent()) ?? '';
      const threads = JSON.parse(body) as { subject: { title: string }; repository: { full_name: string } }[];
      assert.ok(threads.length >= 1, body);
      assert.ok(threads.some((thread) => thread.subject.title === 'Widgets wobble on Tuesdays' && thread.repository.full_name === 'acme/widgets'), body);
      // The panel called the API at the address the page came from.
      const curl = (await operation.locator('.curl-command').textContent()) ?? '';
      assert.ok(curl.includes(`${server.apiUrl}/notifications`), curl);
    } finally {
      await page.close();
    }
  });

  // needs the clients branch: CORS (the preflight of a request with Authorization, Access-Control-Allow-Origin
  // and Access-Control-Expose-Headers for Link and X-RateLimit-*)
  test('a page on another origin calls the API with fetch and reads Link and X-RateLimit-Remaining', async () => {
    // Two threads of mona's at least, so a page of one has a next page.
    await server.admin('POST', '/repos/acme/widgets/issues', { author: 'hubot', title: 'From the browser', body: '@mona see this' });
    await server.admin('POST', '/jobs/drain', { timeout_seconds: 60 });
    const html = docExample('browser', server.address);
    const origin: Server = createServer((_request, response) => response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(html));
    await new Promise<void>((resolve) => origin.listen(0, '127.0.0.1', resolve));
    const page = await browser.newPage();
    const seen = watch(page);
    try {
      const pageUrl = `http://127.0.0.1:${(origin.address() as AddressInfo).port}/`;
      assert.notEqual(new URL(pageUrl).origin, new URL(server.address).origin);
      await page.goto(pageUrl);
      // The page's script replaces the "…" with what it found.
      let shown: string | null = null;
      for (const deadline = Date.now() + 10_000; !shown && Date.now() < deadline; await new Promise((resolve) => setTimeout(resolve, 50))) {
        const text = await page.locator('#out').textContent();
        if (text && text !== '…') shown = text;
      }
      assert.ok(shown, `the page showed nothing:\n${seen.join('\n')}`);
      const result = JSON.parse(shown) as { status: number; link: string | null; remaining: string | null; first: string };
      assert.equal(result.status, 200, shown);
      assert.match(result.link ?? '', /<http:\/\/127\.0\.0\.1:\d+\/api\/v3\/notifications\?[^>]*page=2[^>]*>; rel="next"/, shown);
      assert.match(result.remaining ?? '', /^\d+$/, shown);
      assert.ok(Number(result.remaining) < 5000, shown);
      assert.equal(result.first, 'From the browser');
    } finally {
      await page.close();
      origin.closeAllConnections();
      await new Promise((resolve) => origin.close(resolve));
    }
  });
});
