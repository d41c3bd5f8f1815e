// Helpers of the conditional-request tests (issue 22): a notification made through the admin API,
// and the proof that a 304 never hides a change (the validators seen before a change give 304, and
// after it neither If-None-Match nor If-Modified-Since gets a 304, then the new ones do).
import assert from 'node:assert/strict';
import type { Response, TestServer } from './server.ts';

/** Gives `login` a notification about a release of `repository` titled `title`. */
export const notify = (server: TestServer, login: string, repository: string, title: string) =>
  server.admin('POST', '/notifications', {
    login,
    repository,
    subject: { type: 'Release', title, url: `https://example.com/${repository}/releases/${title}` },
    reason: 'subscribed',
  });

/** A GET of the public API by one caller, with optional conditional headers. */
export type ConditionalGet = (path: string, headers?: Record<string, string>) => Promise<Response>;

/** A 200 answer's validators and body, as a poller keeps them. */
export interface Seen {
  path: string;
  etag: string;
  /** Null for a route that gives only an entity tag. */
  lastModified: string | null;
  text: string;
}

/**
 * GETs `path` (a 200 with both validators, or only an entity tag when `etagOnly`) and proves each
 * validator alone gives a 304.
 */
export async function seenAndUnchanged(get: ConditionalGet, path: string, cause: string, etagOnly = false): Promise<Seen> {
  const answer = await get(path);
  assert.equal(answer.status, 200, `${cause}, ${path}`);
  const etag = answer.headers.get('etag')!;
  const lastModified = answer.headers.get('last-modified');
  assert.ok(etag && (etagOnly || lastModified), `${cause}, ${path}: both validators`);
  notModified(await get(path, { 'if-none-match': etag }), `${cause}, ${path}: If-None-Match before`);
  if (lastModified) notModified(await get(path, { 'if-modified-since': lastModified }), `${cause}, ${path}: If-Modified-Since before`);
  return { path, etag, lastModified, text: answer.text };
}

/**
 * A 304 as HTTP wants it: no content, so no Content-Type and no Content-Length (a Content-Length
 * that does not count the 200's bytes leaves a client or proxy waiting for bytes that never come).
 */
export function notModified(answer: Response, what: string): void {
  assert.equal(answer.status, 304, what);
  assert.equal(answer.text, '', `${what}: no content`);
  assert.equal(answer.headers.get('content-length'), null, `${what}: no Content-Length`);
  assert.equal(answer.headers.get('content-type'), null, `${what}: no Content-Type`);
}

/**
 * After a change, neither validator of `seen` gets a 304. `gone: true` wants a 404 for both,
 * `gone: 'maybe'` accepts one; otherwise a 200 whose body changed (unless `bodyChanges` is false),
 * with a new tag, the same as a plain GET's, and whose new validators give a 304 again.
 */
export async function changeNotHidden(
  get: ConditionalGet,
  seen: Seen,
  cause: string,
  options: { bodyChanges?: boolean; gone?: boolean | 'maybe' } = {},
): Promise<void> {
  const byTag = await get(seen.path, { 'if-none-match': seen.etag });
  assert.notEqual(byTag.status, 304, `${cause}, ${seen.path}: a 304 for If-None-Match hid the change`);
  // Without a Last-Modified, a client's If-Modified-Since is a date it had from elsewhere.
  const byDate = await get(seen.path, { 'if-modified-since': seen.lastModified ?? new Date().toUTCString() });
  assert.notEqual(byDate.status, 304, `${cause}, ${seen.path}: a 304 for If-Modified-Since hid the change`);
  if (options.gone === true) {
    assert.equal(byTag.status, 404, `${cause}, ${seen.path}`);
    assert.equal(byDate.status, 404, `${cause}, ${seen.path}`);
    return;
  }
  if (options.gone === 'maybe' && byTag.status === 404) return;
  assert.equal(byTag.status, 200, `${cause}, ${seen.path}`);
  assert.equal(byDate.text, byTag.text);
  if (options.bodyChanges !== false) assert.notEqual(byTag.text, seen.text, `${cause}, ${seen.path}: the answer shows the change`);
  const etag = byTag.headers.get('etag')!;
  assert.notEqual(etag, seen.etag, `${cause}, ${seen.path}: a new tag`);
  // A plain GET answers the new page too: nothing kept from before the change (a page kept by its tag) is answered.
  const plain = await get(seen.path);
  assert.equal(plain.text, byTag.text, `${cause}, ${seen.path}: a plain GET shows the change`);
  assert.equal(plain.headers.get('etag'), etag, `${cause}, ${seen.path}: a plain GET has the new tag`);
  assert.equal((await get(seen.path, { 'if-none-match': etag })).status, 304, `${cause}, ${seen.path}: the new tag matches`);
  const lastModified = byTag.headers.get('last-modified');
  if (seen.lastModified) assert.equal((await get(seen.path, { 'if-modified-since': lastModified! })).status, 304, `${cause}, ${seen.path}: the new date matches`);
}
