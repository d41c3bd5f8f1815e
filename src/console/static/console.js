// The codehost console: every panel calls the admin API (/_admin) with the admin token kept in this
// tab's sessionStorage. Text goes into the page with textContent only, never as HTML.
const KEY = 'codehost.adminToken';
const $ = (selector) => document.querySelector(selector);

class AdminError extends Error {
  constructor(status, body) {
    super(`${status}: ${body?.message ?? 'the request failed'}${body?.errors ? ` (${body.errors.map((e) => e.message ?? `${e.field} ${e.code}`).join('; ')})` : ''}`);
    this.status = status;
  }
}

/** One admin call: the parsed JSON answer (null for an empty one); an AdminError unless 2xx. */
async function admin(method, path, body) {
  const headers = { authorization: `Bearer ${sessionStorage.getItem(KEY)}`, accept: 'application/json' };
  if (body !== undefined) headers['content-type'] = 'application/json';
  const response = await fetch(`/_admin${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await response.text();
  const parsed = text ? JSON.parse(text) : null;
  if (!response.ok) throw new AdminError(response.status, parsed);
  return parsed;
}

function say(message, error = false) {
  const status = $('#status');
  status.textContent = message;
  status.classList.toggle('error', error);
}

/** Runs an action from a button or form; an error is said, not thrown. */
async function act(what, action) {
  try {
    const result = await action();
    if (what) say(what);
    return result;
  } catch (error) {
    if (error instanceof AdminError && error.status === 401) signOut('The admin token was refused: sign in again.');
    else say(`${what || 'Failed'}: ${error.message}`, true);
    return undefined;
  }
}

function element(tag, text, attributes = {}) {
  const node = document.createElement(tag);
  if (text !== undefined && text !== null) node.textContent = String(text);
  for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, value);
  return node;
}

function button(label, onClick, name) {
  const node = element('button', label, { type: 'button' });
  if (name) node.setAttribute('aria-label', name);
  node.addEventListener('click', onClick);
  return node;
}

function row(cells) {
  const tr = element('tr');
  for (const cell of cells) {
    const td = element('td');
    if (cell instanceof Node) td.append(cell);
    else td.textContent = cell === null || cell === undefined ? '' : String(cell);
    tr.append(td);
  }
  return tr;
}

const pretty = (value) => (typeof value === 'string' ? value : JSON.stringify(value, null, 2));

/** A titled <pre> for each part of a detail view. */
function details(container, title, parts) {
  container.replaceChildren(element('h3', title));
  for (const [heading, value] of parts) {
    container.append(element('h4', heading), element('pre', pretty(value ?? '')));
  }
}

/** The form's fields as a JSON body: empty fields left out, lists split on commas, JSON parsed. */
function formBody(form) {
  const body = {};
  for (const input of form.querySelectorAll('input, select, textarea')) {
    if (!input.name || input.type === 'checkbox' || input.value.trim() === '') continue;
    const value = input.value.trim();
    if (input.hasAttribute('data-list')) body[input.name] = value.split(',').map((part) => part.trim()).filter(Boolean);
    else if (input.hasAttribute('data-json')) body[input.name] = JSON.parse(value);
    else if (input.hasAttribute('data-number')) body[input.name] = Number(value);
    else body[input.name] = value;
  }
  return body;
}

function onSubmit(selector, handler) {
  $(selector).addEventListener('submit', (event) => {
    event.preventDefault();
    handler(event.currentTarget);
  });
}

// ---------------------------------------------------------------------------------------------------
// The world: the admin lists and create routes.

// A list with `per` is read for each item of that list (an org's teams, an app's installations).
const LISTS = {
  users: { title: 'Users', columns: ['login', 'name', 'type'], cells: (u) => [u.login, u.name, u.type] },
  orgs: { title: 'Organizations', columns: ['login', 'name'], cells: (o) => [o.login, o.name] },
  teams: {
    title: 'Teams', per: 'orgs', path: (org) => `/orgs/${encodeURIComponent(org.login)}/teams`,
    columns: ['organization', 'slug', 'name'], cells: (t, org) => [org.login, t.slug, t.name],
  },
  repos: { title: 'Repositories', columns: ['full name', 'visibility', 'description'], cells: (r) => [r.full_name, r.visibility, r.description] },
  apps: { title: 'Apps', columns: ['slug', 'name', 'owner', 'events'], cells: (a) => [a.slug, a.name, a.owner, a.events.join(', ')] },
  installations: {
    title: 'Installations', per: 'apps', path: (app) => `/apps/${encodeURIComponent(app.slug)}/installations`,
    columns: ['app', 'id', 'account', 'repositories', 'suspended'],
    cells: (i, app) => [app.slug, i.id, i.account.login, i.repository_selection, i.suspended_at ?? 'no'],
  },
  tokens: { title: 'Tokens', columns: ['id', 'kind', 'login', 'app', 'note', 'ends with', 'expires'], cells: (t) => [t.id, t.kind, t.login, t.app, t.note, t.token_last_eight, t.expires_at] },
};

async function refreshWorld() {
  const container = $('#world-lists');
  const tables = [];
  const loaded = {};
  for (const [name, list] of Object.entries(LISTS)) {
    // [item, parent] pairs; a list read per parent reads the first 100 of each.
    const items = list.per
      ? (await Promise.all(loaded[list.per].map(async (parent) => (await admin('GET', `${list.path(parent)}?per_page=100`)).map((item) => [item, parent])))).flat()
      : (await admin('GET', `/${name}?per_page=100`)).map((item) => [item]);
    loaded[name] = items.map(([item]) => item);
    const table = element('table');
    table.append(element('caption', `${list.title} (${items.length}${!list.per && items.length === 100 ? ', the first 100' : ''})`));
    const head = element('tr');
    for (const column of list.columns) head.append(element('th', column, { scope: 'col' }));
    table.append(element('thead'));
    table.tHead.append(head);
    const bodyRows = element('tbody');
    for (const [item, parent] of items) bodyRows.append(row(list.cells(item, parent)));
    table.append(bodyRows);
    tables.push(table);
    if (name === 'apps') fillAppChoice(loaded.apps);
  }
  container.replaceChildren(...tables);
}

function fillAppChoice(apps) {
  const select = $('#deliveries-app');
  const chosen = select.value;
  select.replaceChildren(...apps.map((app) => element('option', app.slug, { value: app.slug })));
  if (apps.some((app) => app.slug === chosen)) select.value = chosen;
}

const CREATES = {
  users: (b) => ['/users', b],
  orgs: (b) => ['/orgs', b],
  teams: ({ org, ...b }) => [`/orgs/${encodeURIComponent(org)}/teams`, b],
  repos: (b) => ['/repos', b],
  apps: ({ webhook_url, webhook_secret, ...b }) => ['/apps', webhook_url || webhook_secret ? { ...b, webhook: { url: webhook_url, secret: webhook_secret } } : b],
  installations: ({ app, repositories, ...b }) => [
    `/apps/${encodeURIComponent(app)}/installations`,
    repositories === undefined ? b : { ...b, repositories: repositories.length === 1 && repositories[0] === 'all' ? 'all' : repositories },
  ],
  tokens: (b) => ['/tokens', b],
};

function showCreated(kind, answer) {
  const container = $('#created');
  container.replaceChildren(element('h3', `Created (${kind})`));
  // The one-time secrets of a token or an app are shown here once and kept nowhere.
  const once = ['token', 'client_secret', 'private_key'].filter((field) => typeof answer?.[field] === 'string');
  if (once.length > 0) container.append(element('p', `Copy ${once.join(', ')} now: it is shown this once.`, { class: 'secret' }));
  container.append(element('pre', pretty(answer)));
}

for (const form of document.querySelectorAll('form[data-create]')) {
  const kind = form.getAttribute('data-create');
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    act(`Created ${kind.replace(/s$/, '')}`, async () => {
      const [path, body] = CREATES[kind](formBody(form));
      showCreated(kind, await admin('POST', path, body));
      form.reset();
      await refreshWorld();
    });
  });
}

// ---------------------------------------------------------------------------------------------------
// The request journal: polled with `since` the newest id seen while "Live" is on.

let journalFilter = {};
let newestId = 0;
let entries = [];

function journalQuery(extra) {
  const query = new URLSearchParams({ per_page: '100', ...journalFilter, ...extra });
  return `/requests?${query}`;
}

function credentialText(credential) {
  if (!credential || credential.kind === 'anonymous' || !credential.kind) return credential?.kind ?? '';
  return [credential.kind, credential.login, credential.app, credential.installation && `installation ${credential.installation}`].filter(Boolean).join(' · ');
}

function renderJournal() {
  const rows = entries.map((entry) => row([
    entry.id,
    entry.at,
    `${entry.method} ${entry.path}${Object.keys(entry.query ?? {}).length > 0 ? `?${new URLSearchParams(entry.query)}` : ''}`,
    entry.operation,
    credentialText(entry.credential),
    entry.status,
    entry.duration_ms,
    (entry.warnings ?? []).map((warning) => warning.code).join(', '),
    button('Open', () => openEntry(entry), `Open request ${entry.id}`),
  ]));
  $('#journal-rows').replaceChildren(...rows);
}

function openEntry(entry) {
  details($('#journal-entry'), `Request ${entry.id}: ${entry.method} ${entry.path} → ${entry.status}`, [
    ['Credential', entry.credential],
    ['Warnings', entry.warnings],
    ['Request headers', entry.request?.headers],
    ['Request body', entry.request?.body],
    ['Response headers', entry.response?.headers],
    ['Response body', entry.response?.body],
  ]);
  $('#journal-entry h3').setAttribute('tabindex', '-1');
  $('#journal-entry h3').focus();
}

async function loadJournal() {
  entries = await admin('GET', journalQuery());
  newestId = entries.reduce((max, entry) => Math.max(max, entry.id), newestId);
  renderJournal();
}

async function pollJournal() {
  if (!$('#journal-live').checked || $('#console').hidden) return;
  const fresh = await admin('GET', journalQuery({ since: String(newestId) }));
  if (fresh.length === 0) return;
  newestId = fresh.reduce((max, entry) => Math.max(max, entry.id), newestId);
  entries = [...fresh, ...entries].slice(0, 500);
  renderJournal();
}

onSubmit('#journal-filter', (form) => act('Filtered the journal', async () => {
  journalFilter = formBody(form);
  await loadJournal();
}));
$('#journal-clear').addEventListener('click', () => act('Cleared the journal', async () => {
  await admin('DELETE', '/requests');
  entries = [];
  renderJournal();
  $('#journal-entry').replaceChildren();
}));

let polling = null;
function startPolling() {
  polling ??= setInterval(() => {
    pollJournal().catch((error) => {
      if (error instanceof AdminError && error.status === 401) signOut('The admin token was refused: sign in again.');
      else say(`The journal: ${error.message}`, true);
    });
  }, 1000);
}

// ---------------------------------------------------------------------------------------------------
// Webhook deliveries per app.

let deliveriesApp = null;

async function loadDeliveries(app) {
  deliveriesApp = app;
  const list = await admin('GET', `/apps/${encodeURIComponent(app)}/deliveries?per_page=100`);
  $('#deliveries-rows').replaceChildren(...list.map((delivery) => row([
    delivery.id,
    delivery.delivered_at,
    [delivery.event, delivery.action].filter(Boolean).join('.'),
    `${delivery.status_code} ${delivery.status}`,
    delivery.redelivery ? 'yes' : 'no',
    (() => {
      const cell = element('span');
      cell.append(
        button('Open', () => act('', () => openDelivery(app, delivery.id)), `Open delivery ${delivery.id}`),
        ' ',
        button('Redeliver', () => act(`Redelivery of ${delivery.id} queued`, async () => {
          await admin('POST', `/apps/${encodeURIComponent(app)}/deliveries/${delivery.id}/attempts`);
          await admin('POST', '/jobs/drain', { timeout_seconds: 30, wait_for_deferred: false });
          await loadDeliveries(app);
        }), `Redeliver delivery ${delivery.id}`),
      );
      return cell;
    })(),
  ])));
  if (list.length === 0) say(`No deliveries for ${app} yet`);
}

async function openDelivery(app, id) {
  const delivery = await admin('GET', `/apps/${encodeURIComponent(app)}/deliveries/${id}`);
  const headers = delivery.request?.headers ?? {};
  const signature = Object.entries(headers).filter(([name]) => /signature/i.test(name));
  details($('#delivery'), `Delivery ${delivery.id} (${delivery.guid}) to ${delivery.url}`, [
    ['Signature', Object.fromEntries(signature)],
    ['Request headers', headers],
    ['Payload', delivery.request?.payload],
    ['Receiver answered', `${delivery.status_code} ${delivery.status} in ${delivery.duration} s`],
    ['Response headers', delivery.response?.headers],
    ['Response body', delivery.response?.payload],
  ]);
  $('#delivery h3').setAttribute('tabindex', '-1');
  $('#delivery h3').focus();
}

onSubmit('#deliveries-form', (form) => act('', () => loadDeliveries(form.elements.app.value)));

// ---------------------------------------------------------------------------------------------------
// Notifications, faults, the clock, snapshots and reset.

onSubmit('#notify', (form) => act('Notified', async () => {
  const { login, repository, type, title, url, reason } = formBody(form);
  const thread = await admin('POST', '/notifications', { login, repository, reason, subject: { type, title, url } });
  $('#notified').textContent = pretty(thread);
}));

async function loadFaults() {
  const faults = await admin('GET', '/faults');
  $('#faults-list').replaceChildren(...faults.map((fault) => {
    const item = element('li');
    const match = Object.entries(fault.match).filter(([, value]) => value !== null).map(([key, value]) => `${key} ${value}`).join(', ');
    item.append(
      `#${fault.id} ${fault.effect}${fault.status ? ` ${fault.status}` : ''}${fault.delay_ms ? ` ${fault.delay_ms} ms` : ''} on ${match || 'every request'}; hits ${fault.hits}${fault.times_remaining === null ? '' : `, ${fault.times_remaining} left`} `,
      button('Remove', () => act(`Removed fault ${fault.id}`, async () => {
        await admin('DELETE', `/faults/${fault.id}`);
        await loadFaults();
      }), `Remove fault ${fault.id}`),
    );
    return item;
  }));
}

onSubmit('#fault-form', (form) => act('Added a fault', async () => {
  const body = {};
  const match = {};
  for (const [name, value] of Object.entries(formBody(form))) {
    if (form.elements[name].hasAttribute('data-match')) match[name] = value;
    else body[name] = value;
  }
  if (Object.keys(match).length > 0) body.match = match;
  await admin('POST', '/faults', body);
  await loadFaults();
}));
$('#faults-clear').addEventListener('click', () => act('Cleared the faults', async () => {
  await admin('DELETE', '/faults');
  await loadFaults();
}));

async function loadClock() {
  try {
    $('#clock-now').textContent = (await admin('GET', '/clock')).now;
    $('#clock-form').hidden = false;
  } catch (error) {
    if (!(error instanceof AdminError) || error.status !== 404) throw error;
    $('#clock-now').textContent = 'the real time (the test clock is off: start with CODEHOST_TEST_CLOCK=1 to move it)';
    $('#clock-form').hidden = true;
  }
}

onSubmit('#clock-form', (form) => act('Moved the clock', async () => {
  $('#clock-now').textContent = (await admin('POST', '/clock', formBody(form))).now;
}));

async function loadSnapshots() {
  const snapshots = await admin('GET', '/snapshots');
  $('#snapshots-list').replaceChildren(...snapshots.map((snapshot) => {
    const item = element('li');
    item.append(
      `${snapshot.name} (${snapshot.created_at}, ${snapshot.bytes} bytes) `,
      button('Restore', () => act('', async () => {
        const { took_ms } = await admin('POST', `/snapshots/${encodeURIComponent(snapshot.name)}/restore`);
        await refreshAll();
        say(`Restored ${snapshot.name} in ${took_ms} ms`);
      }), `Restore snapshot ${snapshot.name}`),
      ' ',
      button('Delete', () => act(`Deleted ${snapshot.name}`, async () => {
        await admin('DELETE', `/snapshots/${encodeURIComponent(snapshot.name)}`);
        await loadSnapshots();
      }), `Delete snapshot ${snapshot.name}`),
    );
    return item;
  }));
}

onSubmit('#snapshot-form', (form) => act('Saved the snapshot', async () => {
  await admin('POST', '/snapshots', formBody(form));
  form.reset();
  await loadSnapshots();
}));

onSubmit('#reset-form', (form) => act('', async () => {
  const { took_ms } = await admin('POST', '/reset', formBody(form));
  await refreshAll();
  say(`Reset in ${took_ms} ms`);
}));

// ---------------------------------------------------------------------------------------------------
// Signing in and out.

async function refreshAll() {
  await refreshWorld();
  await loadJournal();
  await loadFaults();
  await loadClock();
  await loadSnapshots();
  // The app whose deliveries were shown may be gone after a reset or restore.
  if (deliveriesApp && [...$('#deliveries-app').options].some((option) => option.value === deliveriesApp)) await loadDeliveries(deliveriesApp);
  else {
    deliveriesApp = null;
    $('#deliveries-rows').replaceChildren();
    $('#delivery').replaceChildren();
  }
}

function signOut(message) {
  sessionStorage.removeItem(KEY);
  clearInterval(polling);
  polling = null;
  $('#console').hidden = true;
  $('#signin').hidden = false;
  say(message, message !== 'Signed out');
  $('#signin-token').focus();
}

async function signIn() {
  $('#signin').hidden = true;
  $('#console').hidden = false;
  await act('Signed in', refreshAll);
  if (sessionStorage.getItem(KEY)) startPolling(); // unless the token was refused
}

$('#world-refresh').addEventListener('click', () => act('Refreshed', refreshWorld));
$('#signout').addEventListener('click', () => signOut('Signed out'));
onSubmit('#signin', (form) => {
  sessionStorage.setItem(KEY, form.elements.token.value);
  form.reset();
  signIn();
});

if (sessionStorage.getItem(KEY)) signIn();
else $('#signin-token').focus();
