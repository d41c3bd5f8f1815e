// The codehost console: every panel calls the admin API (/_admin) with the admin token kept in this
// tab's sessionStorage. Text goes into the page with textContent only, never as HTML. The shared
// parts are in common.js, the request journal's panel (and the permissions used) in requests-panel.js.
import { $, act, admin, button, details, element, focusHeading, formBody, onSubmit, pretty, row, say, session, KEY } from './common.js';
import { callsAfter, loadJournal, startPolling, stopPolling } from './requests-panel.js';

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
  for (const select of document.querySelectorAll('select.app-choice')) {
    const chosen = select.value;
    select.replaceChildren(...apps.map((app) => element('option', app.slug, { value: app.slug })));
    if (apps.some((app) => app.slug === chosen)) select.value = chosen;
  }
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
  await callsAfter(app, delivery, $('#delivery'));
  focusHeading($('#delivery'));
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
  stopPolling();
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

session.refused = () => signOut('The admin token was refused: sign in again.');
$('#world-refresh').addEventListener('click', () => act('Refreshed', refreshWorld));
$('#signout').addEventListener('click', () => signOut('Signed out'));
onSubmit('#signin', (form) => {
  sessionStorage.setItem(KEY, form.elements.token.value);
  form.reset();
  signIn();
});

if (sessionStorage.getItem(KEY)) signIn();
else $('#signin-token').focus();
