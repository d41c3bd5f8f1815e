// The request journal panel: filtered on the server by the journal's own fields (a token of fewer
// than eight characters here, by the end it shows), live, each entry opened as its request and answer side by side,
// the calls an installation made after a delivery, and the permissions an app used beside its grant.
import { $, AdminError, act, admin, button, element, focusHeading, formBody, onSubmit, pretty, say, session, table } from './common.js';

/** The filters GET /_admin/requests takes (src/testing/journal.ts FILTER_FIELDS). */
const SERVER_FILTERS = ['method', 'path', 'operation', 'login', 'app', 'installation', 'status', 'warning'];

/** The characters a masked credential ends with in the journal (`Bearer [masked]…abcd`). */
const shownTail = (entry) => /…([^\s…]+)$/.exec(String(entry.request?.headers?.authorization ?? ''))?.[1] ?? null;

/** The server takes a token whole or by its last eight characters; a shorter end is matched here. */
const serverToken = (value) => String(value).length >= 8;

/** The filters matched here, on the entries the server's filters gave. */
const CLIENT_FILTERS = {
  token: (entry, value) => {
    if (serverToken(value)) return true;
    const lastEight = entry.credential?.token_last_eight;
    if (lastEight) return lastEight.endsWith(value);
    const tail = shownTail(entry);
    return tail !== null && (value.endsWith(tail) || tail.endsWith(value));
  },
};

/** How the two warnings that change what an answer means are marked (a badge each). */
const MARKS = {
  injected_fault: { label: 'fault injected', class: 'badge fault' },
  unserved_operation: { label: 'not served', class: 'badge unserved' },
};

const PHRASES = {
  200: 'OK', 201: 'Created', 202: 'Accepted', 204: 'No Content', 301: 'Moved Permanently', 302: 'Found', 304: 'Not Modified',
  400: 'Bad Request', 401: 'Unauthorized', 403: 'Forbidden', 404: 'Not Found', 409: 'Conflict', 410: 'Gone', 422: 'Unprocessable Entity',
  429: 'Too Many Requests', 500: 'Internal Server Error', 502: 'Bad Gateway', 503: 'Service Unavailable', 504: 'Gateway Timeout',
};

let filter = {};
let newestId = 0;
let entries = [];

function query(extra) {
  const server = Object.fromEntries(Object.entries(filter).filter(([name, value]) => SERVER_FILTERS.includes(name) || (name === 'token' && serverToken(value))));
  const local = Object.entries(filter).some(([name, value]) => name === 'token' && !serverToken(value));
  // Filtered here too: read as many as the server gives at once, keep the newest 100 that match.
  return `/requests?${new URLSearchParams({ per_page: local ? '1000' : '100', ...server, ...extra })}`;
}

const matches = (entry) => Object.entries(filter).every(([name, value]) => !(name in CLIENT_FILTERS) || CLIENT_FILTERS[name](entry, String(value)));

export function credentialText(credential) {
  if (!credential || credential.kind === 'anonymous' || !credential.kind) return credential?.kind ?? '';
  return [
    credential.kind, credential.login, credential.app, credential.installation && `installation ${credential.installation}`,
    credential.token_last_eight && `…${credential.token_last_eight}`, credential.expired_at && `expired at ${credential.expired_at}`,
  ].filter(Boolean).join(' · ');
}

const requestLine = (entry) => `${entry.method} ${entry.path}${Object.keys(entry.query ?? {}).length > 0 ? `?${new URLSearchParams(entry.query)}` : ''}`;

/** The badges of an entry: the two marks, the other warnings' codes, and "explained". */
export function marks(entry) {
  const span = element('span', null, { class: 'marks' });
  for (const warning of entry.warnings ?? []) {
    const mark = MARKS[warning.code];
    span.append(element('span', mark ? mark.label : warning.code, { class: mark ? mark.class : 'badge', title: warning.message ?? warning.code, 'data-code': warning.code }), ' ');
  }
  if (entry.explanation) span.append(element('span', 'explained', { class: 'badge explained', title: String(entry.explanation.reason ?? '') }));
  return span;
}

function statusCell(status) {
  return element('span', `${status}${PHRASES[status] ? ` ${PHRASES[status]}` : ''}`, { class: `status s${String(status)[0]}xx` });
}

/** A table of entries, each with an Open button showing it in `into`. */
export function entriesTable(list, into, caption) {
  return table(caption, ['#', 'At', 'Request', 'Operation', 'Credential', 'Status', 'ms', 'Marks', ''], list.map((entry) => [
    entry.id, entry.at, requestLine(entry), entry.operation, credentialText(entry.credential), statusCell(entry.status), entry.duration_ms, marks(entry),
    button('Open', () => openEntry(entry, into), `Open request ${entry.id}`),
  ]));
}

function render() {
  const body = entriesTable(entries, $('#journal-entry')).tBodies[0];
  $('#journal-rows').replaceChildren(...body.rows);
}

/** A value of an explanation (a list, a map of permissions, a text) as a short line. */
function said(value) {
  if (value === null || value === undefined) return '—';
  if (Array.isArray(value)) return value.length === 0 ? 'nothing' : value.map(said).join(', ');
  if (typeof value === 'object') {
    const parts = Object.entries(value).map(([name, item]) => (item !== null && typeof item === 'object' ? `${name}: ${said(item)}` : `${name}: ${item}`));
    return parts.length === 0 ? 'nothing' : parts.join(', ');
  }
  return String(value);
}

/** What an operation needs: any one of the credentials, scopes, permission sets or roles. */
function neededText(needed) {
  if (!needed || typeof needed !== 'object' || Array.isArray(needed)) return said(needed);
  const parts = Object.entries(needed).map(([name, value]) => `${name}: ${Array.isArray(value) ? value.map(said).join(' or ') : said(value)}`);
  return parts.length === 0 ? 'nothing' : parts.join('; ');
}

function headersTable(headers, caption) {
  return table(caption, ['Header', 'Value'], Object.entries(headers ?? {}).map(([name, value]) => [name, Array.isArray(value) ? value.join(', ') : value]));
}

function side(title, lines, headers, body, prefix) {
  const part = element('section', null, { class: 'side', 'aria-label': title });
  part.append(element('h4', title));
  for (const line of lines) part.append(element('p', line[1], { class: line[0] }));
  part.append(element('h5', `${prefix} headers`), headersTable(headers));
  part.append(element('h5', `${prefix} body`), element('pre', body === null || body === undefined ? '(empty)' : pretty(body)));
  return part;
}

/** An entry as its request and its answer side by side, with its marks, warnings and explanation. */
export function openEntry(entry, container) {
  container.replaceChildren(element('h3', `Request ${entry.id}: ${entry.method} ${entry.path} → ${entry.status}`));
  container.append(marks(entry));
  if ((entry.warnings ?? []).length > 0) {
    const list = element('ul', null, { class: 'warnings' });
    for (const warning of entry.warnings) list.append(element('li', `${warning.code}: ${warning.message ?? ''}`));
    container.append(list);
  }
  const why = entry.explanation;
  if (why) {
    const box = element('dl', null, { class: 'explanation', 'aria-label': 'Why' });
    const lines = [['Why', [why.message, why.reason && `(${why.reason})`].filter(Boolean).join(' ')]];
    if (why.credential) lines.push(['Credential', credentialText(why.credential) || said(why.credential)]);
    lines.push(['Needed', neededText(why.needed)], ['Held', said(why.held)]);
    for (const [term, value] of lines) box.append(element('dt', term), element('dd', value));
    container.append(box);
  }
  if (entry.fault) container.append(element('p', `Answered by fault rule #${entry.fault.id} (${entry.fault.effect}), not by the platform's code.`, { class: 'fault-note' }));
  const pair = element('div', null, { class: 'pair' });
  pair.append(
    side('Request', [['line', requestLine(entry)], ['credential', `Credential: ${credentialText(entry.credential) || 'none'}`], ['at', `At ${entry.at}`]], entry.request?.headers, entry.request?.body, 'Request'),
    side('Answer', [
      ['line', statusCell(entry.status).textContent], ['operation', `Operation: ${entry.operation ?? 'none'}`], ['duration', `In ${entry.duration_ms} ms`],
      ...(entry.access && !entry.explanation ? [['access', `The access rule used ${entry.access.used ? said(entry.access.used) : 'nothing (a public read)'}; held ${said(entry.access.held)}`]] : []),
    ], entry.response?.headers, entry.response?.body, 'Answer'),
  );
  container.append(pair);
  focusHeading(container);
}

export async function loadJournal() {
  const found = await admin('GET', query());
  newestId = found.reduce((max, entry) => Math.max(max, entry.id), newestId);
  entries = found.filter(matches).slice(0, 100);
  render();
}

async function poll() {
  if (!$('#journal-live').checked || $('#console').hidden) return;
  const fresh = await admin('GET', query({ since: String(newestId) }));
  if (fresh.length === 0) return;
  newestId = fresh.reduce((max, entry) => Math.max(max, entry.id), newestId);
  entries = [...fresh.filter(matches), ...entries].slice(0, 500);
  render();
}

onSubmit('#journal-filter', (form) => act('Filtered the journal', async () => {
  filter = formBody(form);
  await loadJournal();
}));
$('#journal-clear').addEventListener('click', () => act('Cleared the journal', async () => {
  await admin('DELETE', '/requests');
  entries = [];
  render();
  $('#journal-entry').replaceChildren();
}));

let polling = null;
export function startPolling() {
  polling ??= setInterval(() => {
    poll().catch((error) => {
      if (error instanceof AdminError && error.status === 401) session.refused();
      else say(`The journal: ${error.message}`, true);
    });
  }, 1000);
}
export function stopPolling() {
  clearInterval(polling);
  polling = null;
}

// ---------------------------------------------------------------------------------------------------
// After a delivery: the calls of its installation (and the app's, for that installation) since.

export async function callsAfter(app, delivery, container) {
  const installation = delivery.installation_id ?? delivery.request?.payload?.installation?.id ?? null;
  const heading = element('h4', installation === null ? 'Calls after it' : `Calls installation ${installation} made after it`);
  const view = element('div', null, { class: 'calls' });
  const entryView = element('div', null, { class: 'calls-entry', 'aria-live': 'polite' });
  view.append(heading);
  if (installation === null || !delivery.delivered_at) {
    view.append(element('p', installation === null ? 'This delivery is not of an installation.' : 'Not delivered yet.'));
    container.append(view);
    return;
  }
  const found = await admin('GET', `/requests?${new URLSearchParams({ app, since: delivery.delivered_at, per_page: '1000' })}`);
  const own = found.filter((entry) => entry.credential?.installation === installation || new RegExp(`^(?:/api/v3)?/app/installations/${installation}(?:/|$)`).test(entry.path)).reverse();
  view.append(own.length === 0 ? element('p', 'None yet.') : entriesTable(own, entryView, `${own.length} call${own.length === 1 ? '' : 's'}, oldest first`), entryView);
  container.append(view);
}

// ---------------------------------------------------------------------------------------------------
// Permissions used (GET /_admin/requests/permissions-used?app=): per installation and token, beside
// what was granted. A server without that route says so.

/** Permissions (`{issues: 'read'}`), scopes (`['repo']`) or both (`{permissions, scopes}`) as name → level. */
function levels(value) {
  if (!value) return {};
  if (Array.isArray(value)) return Object.fromEntries(value.map((scope) => [String(scope), 'yes']));
  if (typeof value !== 'object') return { [String(value)]: '' };
  if ('permissions' in value || 'scopes' in value || 'kind' in value) return { ...levels(value.permissions), ...levels(value.scopes) };
  return Object.fromEntries(Object.entries(value).map(([name, level]) => [name, typeof level === 'object' ? said(level) : String(level)]));
}

function holderName(item) {
  const parts = [];
  if (item.app) parts.push(`app ${item.app}`);
  if (item.installation) parts.push(`installation ${typeof item.installation === 'object' ? item.installation.id : item.installation}`);
  if (item.token) parts.push(`token ${typeof item.token === 'object' ? (item.token.id ?? item.token.last_eight ?? said(item.token)) : item.token}`);
  if (item.login) parts.push(item.login);
  if (item.kind) parts.push(item.kind);
  if (item.credential) parts.push(credentialText(item.credential));
  return parts.join(' · ') || 'the app';
}

function holders(answer) {
  if (Array.isArray(answer)) return answer;
  for (const value of Object.values(answer ?? {})) if (Array.isArray(value) && value.every((item) => item && typeof item === 'object')) return value;
  return [answer];
}

export function renderPermissions(answer, container) {
  const list = holders(answer);
  container.replaceChildren(element('h3', `Permissions used (${list.length})`));
  for (const item of list) {
    const used = levels(item.used ?? item.permissions_used ?? item.needed);
    const granted = levels(item.granted ?? item.held);
    const names = [...new Set([...Object.keys(granted), ...Object.keys(used)])].sort();
    container.append(element('h4', `${holderName(item)}${typeof item.requests === 'number' ? ` (${item.requests} call${item.requests === 1 ? '' : 's'} checked)` : ''}`));
    if (names.length === 0 && !item.operations) {
      container.append(element('pre', pretty(item)));
      continue;
    }
    // The server's `unused` where it gives it (`none`: drop it, `read`: read would do); else worked out here.
    const unused = item.unused ? { ...(item.unused.permissions ?? {}), ...Object.fromEntries((item.unused.scopes ?? []).map((scope) => [scope, 'none'])) } : null;
    const note = (name) => {
      const verdict = unused ? unused[name] : !(name in used) ? 'none' : used[name] === 'read' && granted[name] === 'write' ? 'read' : null;
      if (verdict === 'none') return element('span', 'unused: can be dropped', { class: 'badge unused' });
      if (verdict === 'read') return element('span', 'read would do', { class: 'badge unused' });
      return name in granted ? '' : element('span', 'beyond the grant', { class: 'badge fault' });
    };
    if (names.length > 0) container.append(table(null, ['Permission or scope', 'Used', 'Granted', ''], names.map((name) => [name, used[name] ?? '—', granted[name] ?? '—', note(name)])));
    if (item.operations && typeof item.operations === 'object') {
      container.append(table('Operations called', ['Operation', 'Calls', 'Needed'], Object.entries(item.operations).map(([operation, { calls, used: needed }]) => [operation, calls, needed ? said(needed) : 'nothing'])));
    }
  }
}

onSubmit('#permissions-form', (form) => act('', async () => {
  const app = form.elements.app.value;
  try {
    renderPermissions(await admin('GET', `/requests/permissions-used?${new URLSearchParams({ app })}`), $('#permissions-view'));
  } catch (error) {
    if (!(error instanceof AdminError) || error.status !== 404) throw error;
    $('#permissions-view').replaceChildren(element('h3', 'Permissions used'), element('p', `This server does not report the permissions used (${error.message})`));
  }
  focusHeading($('#permissions-view'));
}));
