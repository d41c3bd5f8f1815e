// What every panel of the console shares: the admin API call (with the admin token kept in this tab's
// sessionStorage, and `X-Codehost-Console: 1` so the journal leaves the console's own calls out), the
// status line, and the builders of page elements. Text goes into the page with textContent only.
export const KEY = 'codehost.adminToken';
export const $ = (selector) => document.querySelector(selector);

export class AdminError extends Error {
  constructor(status, body) {
    super(`${status}: ${body?.message ?? 'the request failed'}${body?.errors ? ` (${body.errors.map((e) => e.message ?? `${e.field} ${e.code}`).join('; ')})` : ''}`);
    this.status = status;
  }
}

/** One admin call: the parsed JSON answer (null for an empty one); an AdminError unless 2xx. */
export async function admin(method, path, body) {
  const headers = { authorization: `Bearer ${sessionStorage.getItem(KEY)}`, accept: 'application/json', 'x-codehost-console': '1' };
  if (body !== undefined) headers['content-type'] = 'application/json';
  const response = await fetch(`/_admin${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await response.text();
  const parsed = text ? JSON.parse(text) : null;
  if (!response.ok) throw new AdminError(response.status, parsed);
  return parsed;
}

export function say(message, error = false) {
  const status = $('#status');
  status.textContent = message;
  status.classList.toggle('error', error);
}

/** Set by console.js: what a refused admin token does (sign out). */
export const session = { refused: () => {} };

/** Runs an action from a button or form; an error is said, not thrown. */
export async function act(what, action) {
  try {
    const result = await action();
    if (what) say(what);
    return result;
  } catch (error) {
    if (error instanceof AdminError && error.status === 401) session.refused();
    else say(`${what || 'Failed'}: ${error.message}`, true);
    return undefined;
  }
}

export function element(tag, text, attributes = {}) {
  const node = document.createElement(tag);
  if (text !== undefined && text !== null) node.textContent = String(text);
  for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, value);
  return node;
}

export function button(label, onClick, name) {
  const node = element('button', label, { type: 'button' });
  if (name) node.setAttribute('aria-label', name);
  node.addEventListener('click', onClick);
  return node;
}

export function row(cells) {
  const tr = element('tr');
  for (const cell of cells) {
    const td = element('td');
    if (cell instanceof Node) td.append(cell);
    else td.textContent = cell === null || cell === undefined ? '' : String(cell);
    tr.append(td);
  }
  return tr;
}

/** A table with a caption (optional), column headings and rows of cells (text or nodes). */
export function table(caption, columns, rows) {
  const node = element('table');
  if (caption) node.append(element('caption', caption));
  const head = element('tr');
  for (const column of columns) head.append(element('th', column, { scope: 'col' }));
  node.append(element('thead'));
  node.tHead.append(head);
  const body = element('tbody');
  for (const cells of rows) body.append(row(cells));
  node.append(body);
  return node;
}

export const pretty = (value) => (typeof value === 'string' ? value : JSON.stringify(value, null, 2));

/** A titled <pre> for each part of a detail view. */
export function details(container, title, parts) {
  container.replaceChildren(element('h3', title));
  for (const [heading, value] of parts) {
    container.append(element('h4', heading), element('pre', pretty(value ?? '')));
  }
}

/** Moves the focus to a view just opened (its heading). */
export function focusHeading(container) {
  const heading = container.querySelector('h3');
  heading.setAttribute('tabindex', '-1');
  heading.focus();
}

/** The form's fields as a JSON body: empty fields left out, lists split on commas, JSON parsed. */
export function formBody(form) {
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

export function onSubmit(selector, handler) {
  $(selector).addEventListener('submit', (event) => {
    event.preventDefault();
    handler(event.currentTarget);
  });
}
