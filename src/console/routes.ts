// The console at /_console (admin-api.md "Test support", docs/testing.md): one HTML page, three ES
// modules, one style sheet and a favicon from src/console/static, read once at start. No build step and nothing
// fetched at run time: the page calls /_admin with the admin token the operator types in, kept in the
// tab's sessionStorage (never a cookie or the URL). The page itself holds no data and no secret, so it
// is served without a credential; in production mode it is 404 unless CODEHOST_CONSOLE=1.
import { readFileSync } from 'node:fs';
import type { Api, Context } from '../platform/context.ts';

/** No inline script or style, nothing from another origin, no framing, no form posting elsewhere. */
export const CONSOLE_CSP = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

const FILES = {
  '/_console': { file: 'index.html', type: 'text/html; charset=utf-8' },
  '/_console/console.js': { file: 'console.js', type: 'text/javascript; charset=utf-8' },
  '/_console/common.js': { file: 'common.js', type: 'text/javascript; charset=utf-8' },
  '/_console/requests-panel.js': { file: 'requests-panel.js', type: 'text/javascript; charset=utf-8' },
  '/_console/console.css': { file: 'console.css', type: 'text/css; charset=utf-8' },
  '/_console/favicon.svg': { file: 'favicon.svg', type: 'image/svg+xml' },
} as const;

export function consoleRoutes(app: Api, ctx: Context): void {
  if (!ctx.config.console) return; // unrouted: the platform's 404
  for (const [path, { file, type }] of Object.entries(FILES)) {
    const content = readFileSync(new URL(`./static/${file}`, import.meta.url));
    app.get(path, { schema: { hide: true } }, async (_request, reply) => reply
      .header('content-type', type)
      .header('content-security-policy', CONSOLE_CSP)
      .header('x-content-type-options', 'nosniff')
      .header('referrer-policy', 'no-referrer')
      .header('x-frame-options', 'DENY')
      .header('cache-control', 'no-store')
      .send(content));
  }
}
