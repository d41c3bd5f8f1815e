// The request journal (spec/admin-api.md "Test support"): every API request, public and admin, with
// the operation it matched, who made it with which credential, its status and duration, its headers
// and bodies (bounded, secrets masked) and `warnings`: what codehost accepted but a careful client
// should fix. Kept in this process's memory (the newest CODEHOST_JOURNAL_ENTRIES): several processes
// each keep their own. On by default outside production mode; CODEHOST_JOURNAL turns it on or off.
// Left out: the journal's own routes, /healthz, /readyz, /metrics, /docs, /openapi.json, /_console,
// /favicon.ico and the console's own calls (those with an `X-Codehost-Console` header).
// Each entry also says why a call failed (`explanation`, `fault`, the `unserved_operation` and
// `injected_fault` warnings) and what the access rule that applied required (`access`), read from
// what the request's steps noted (core/access/explain.ts, faults.ts): nothing of it is in the answer.
import type { FastifyReply, FastifyRequest, onRequestHookHandler } from 'fastify';
import { Type, type Static } from 'typebox';
import type { Api, Context } from '../platform/context.ts';
import { perServer } from '../platform/per-server.ts';
import { invalidField } from '../platform/errors.ts';
import { glob } from './fault-store.ts';
import { DEFAULT_API_VERSION } from '../http/version.ts';
import { operationId } from '../http/openapi.ts';
import { DEFAULT_PAGES } from '../platform/pagination.ts';
import { authenticate, explanationOfError, findAppBy, heldBy, type Explanation, type Held, type Principal, type Used } from '../core/access/index.ts';
import type { InjectedFault } from './faults.ts';
import { platformOperation } from './operations.ts';
import { permissionsUsed } from './permissions-used.ts';

/** The most of a request's or an answer's body an entry keeps (characters). */
export const BODY_LIMIT = 16 * 1024;
const MASK = '[masked]';

export interface JournalWarning {
  code: 'unknown_query_parameter' | 'unknown_body_field' | 'missing_api_version' | 'per_page_clamped' | 'unserved_operation' | 'injected_fault';
  message: string;
}

export interface JournalEntry {
  id: number;
  at: string;
  method: string;
  path: string;
  query: Record<string, unknown>;
  operation: string | null;
  /** Who called: for a refused credential, what it claimed to be (`explanation` says why). `token_last_eight`: the token's, as the fault rules name it. */
  credential: { kind: string | null; login: string | null; app: string | null; installation: number | null; token_last_eight: string | null };
  /**
   * What the platform API's access rule that applied required of the caller (`used`: `{scope}`, a
   * classic or OAuth token's scope; `{permissions}`, the permission set a fine-grained credential
   * used; null: nothing, as a public read) beside what it held (`held`: scopes or permissions).
   * Null where no access rule applied (operator and meta requests, unserved routes, a refused credential).
   */
  access: { used: Used; held: Held } | null;
  /** Why the request was refused, where an access check said: `{reason, message, credential?, needed?, held?}` (docs/testing.md "Reading warnings"). */
  explanation: Explanation | null;
  /** The fault rule that answered (or delayed) the request: its id, effect and match. */
  fault: InjectedFault | null;
  status: number;
  duration_ms: number;
  request: { headers: Record<string, unknown>; body: unknown };
  response: { headers: Record<string, unknown>; body: unknown };
  warnings: JournalWarning[];
}

// ---------------------------------------------------------------------------------------------------
// Masking: no token, secret, key or signature is ever kept whole.

/** Keys whose values are secrets, wherever they appear (bodies, queries). */
const SECRET_KEY = /token|secret|password|private_key|key$|signature|^sig$|credential|^code$/i;
/** A token shown by its last four characters only, as the platform's settings pages do. */
const lastFour = (secret: string) => (secret.length > 12 ? `${MASK}…${secret.slice(-4)}` : MASK);
/** A name of a field or parameter that holds a secret, inside a text (JSON, YAML, a query or a form). */
const SECRET_NAME = '[A-Za-z_]*(?:token|secret|password|private_key|signature)[A-Za-z_]*';

/**
 * The secrets one journal entry has seen (every value masked in its request), so that the same value
 * is masked wherever else it appears in the entry: in an answer, a header of another name, a text.
 */
type Seen = Set<string>;

/** Keeps `secret` in `seen` (when it is long enough to be told apart from ordinary text) and masks it. */
function masked(secret: string, seen: Seen | undefined, mask: (secret: string) => string = lastFour): string {
  if (seen && secret.length >= 8 && secret !== MASK) seen.add(secret);
  return mask(secret);
}

/**
 * Secrets inside any text: tokens of every kind (`chp_…`, `chpat_…`, `cho_…`), JWTs, PEM blocks, a
 * signed URL's signature or a secret in a query string or a form body, a JSON secret field in a
 * body too long to parse (cut at BODY_LIMIT), and a YAML one (a seed file's `client_secret:` or a
 * webhook's `secret:`, plain, quoted, in flow style or as a block).
 */
const SECRET_TEXT: [RegExp, (seen: Seen | undefined, match: string, ...groups: string[]) => string][] = [
  [/\bch[a-z]{1,4}_[A-Za-z0-9_]{8,}/g, (seen, match) => masked(match, seen)],
  [/\beyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+/g, (seen, match) => masked(match, seen)],
  [/-----BEGIN [A-Z ]+-----[\s\S]*?(?:-----END [A-Z ]+-----|$)/g, () => MASK],
  [new RegExp(`((?:^|[?&])(?:${SECRET_NAME}|sig|code)=)([^&#"\\s]*)`, 'gi'), (seen, _match, prefix, value) => `${prefix}${masked(decodeQuietly(value!), seen, () => MASK)}`],
  [new RegExp(`("${SECRET_NAME}"\\s*:\\s*")((?:[^"\\\\]|\\\\.)*)"?`, 'gi'), (seen, _match, prefix, value) => `${prefix}${masked(value!, seen, () => MASK)}"`],
  // YAML: `key: |` and the more indented lines below it; `key: "…"`, `key: '…'`; `key: value` up to
  // the end of the line, or to `,`/`}` in flow style.
  [new RegExp(`((?:^|[\\s{,])["']?${SECRET_NAME}["']?[ \\t]*:[ \\t]*)([|>][-+]?[ \\t]*(?:\\n[ \\t]+[^\\n]*)+|"(?:[^"\\\\\\n]|\\\\.)*"?|'[^'\\n]*'?|[^\\s,}\\]#"'][^,}\\]\\n#]*)`, 'gi'), (seen, _match, prefix, value) => {
    const quote = /^["']/.exec(value!)?.[0] ?? '';
    const inner = value!.replace(/^[|>][-+]?[ \t]*\n/, '').replace(/^["']|["']$/g, '').trim();
    for (const line of inner.split('\n')) masked(line.trim(), seen);
    return `${prefix}${quote}${MASK}${quote}`;
  }],
];

function decodeQuietly(value: string): string {
  try {
    return decodeURIComponent(value.replaceAll('+', ' '));
  } catch {
    return value;
  }
}

/** One pass that every text holding a secret of SECRET_TEXT matches (a superset): most texts hold none. */
const MAY_HOLD_SECRET = /ch[a-z]{1,4}_|eyJ|-----BEGIN |(?:^|[?&])(?:sig|code)=|(?:token|secret|password|private_key|signature)[A-Za-z_]*["']?\s*[:=]/i;

function maskText(text: string, seen?: Seen): string {
  if (!MAY_HOLD_SECRET.test(text)) return text;
  let out = text;
  for (const [pattern, replace] of SECRET_TEXT) out = out.replace(pattern, (...args: unknown[]) => replace(seen, ...(args.filter((arg) => typeof arg === 'string') as [string, ...string[]])));
  return out;
}

function maskValue(value: unknown, seen?: Seen, depth = 0): unknown {
  if (typeof value === 'string') return maskText(value, seen);
  if (value === null || typeof value !== 'object') return value;
  if (depth > 32) return MASK;
  if (Array.isArray(value)) return value.map((item) => maskValue(item, seen, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) {
    out[key] = SECRET_KEY.test(key) && item !== null && typeof item !== 'boolean' && typeof item !== 'number' && !(key === 'token_last_eight')
      ? (typeof item === 'string' ? masked(item, seen) : MASK)
      : maskValue(item, seen, depth + 1);
  }
  return out;
}

/** An Authorization value: a scheme and a credential, Basic's user kept (masked as text) and its password masked; a value with no scheme is a credential whole. */
function maskAuthorization(value: string, seen?: Seen): string {
  const parts = value.trim().split(/\s+/);
  if (parts.length < 2) return masked(value.trim(), seen);
  const [scheme, ...rest] = parts;
  const credential = rest.join(' ');
  if (/^basic$/i.test(scheme!)) {
    const decoded = Buffer.from(credential, 'base64').toString('utf8');
    masked(credential, seen);
    const colon = decoded.indexOf(':');
    if (colon >= 0) masked(decoded.slice(colon + 1), seen);
    return `${scheme} ${colon < 0 ? MASK : `${maskText(decoded.slice(0, colon), seen)}:${MASK}`}`;
  }
  return `${scheme} ${masked(credential, seen)}`;
}

function maskHeaders(headers: Record<string, unknown>, seen?: Seen): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(headers)) {
    const lower = name.toLowerCase();
    if (value === undefined) continue;
    if (lower === 'authorization' || lower === 'proxy-authorization') out[lower] = maskAuthorization(String(value), seen);
    else if (lower === 'cookie' || lower === 'set-cookie' || lower.includes('signature') || lower.includes('secret') || lower.includes('token')) {
      for (const item of [value].flat()) masked(String(item), seen);
      out[lower] = MASK;
    } else out[lower] = Array.isArray(value) ? value.map((item) => maskText(String(item), seen)) : maskText(String(value), seen);
  }
  return out;
}

/** Every secret of `seen` that is still in `value` (an answer echoing a request's secret, say), masked. */
function maskSeen(value: unknown, seen: Seen, depth = 0): unknown {
  if (seen.size === 0) return value;
  if (typeof value === 'string') {
    let out = value;
    for (const secret of seen) if (out.includes(secret)) out = out.replaceAll(secret, MASK);
    return out;
  }
  if (value === null || typeof value !== 'object' || depth > 32) return value;
  if (Array.isArray(value)) return value.map((item) => maskSeen(item, seen, depth + 1));
  return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, maskSeen(item, seen, depth + 1)]));
}

/** A body as kept: JSON parsed and masked, other text masked and cut at BODY_LIMIT. */
function keptBody(body: unknown, seen?: Seen): unknown {
  if (body === undefined || body === null || body === '') return null;
  if (Buffer.isBuffer(body)) return `(${body.length} bytes)`;
  if (typeof body === 'object' && typeof (body as { pipe?: unknown }).pipe === 'function') return '(a stream)';
  // Too long to keep whole: cut first (a list of thousands is not parsed for the journal), then masked.
  if (typeof body === 'string' && body.length > BODY_LIMIT) return `${maskText(body.slice(0, BODY_LIMIT), seen)}… (${body.length - BODY_LIMIT} more characters)`;
  let value = body;
  if (typeof body === 'string') {
    try {
      value = JSON.parse(body);
    } catch {
      value = body;
    }
  }
  const maskedValue = maskValue(value, seen);
  // A text within BODY_LIMIT is kept whole once masked, without serializing it again to measure it:
  // masking lengthens it at most twofold (a secret field's `[]` becomes `"[masked]"`), so still bounded.
  if (typeof body === 'string') return maskedValue;
  const text = typeof maskedValue === 'string' ? maskedValue : JSON.stringify(maskedValue);
  if (text.length <= BODY_LIMIT) return maskedValue;
  return `${text.slice(0, BODY_LIMIT)}… (${text.length - BODY_LIMIT} more characters)`;
}

// ---------------------------------------------------------------------------------------------------
// Warnings: what the route accepted but a careful client should fix.

interface RouteSchema {
  hide?: boolean;
  operationId?: string;
  querystring?: { properties?: Record<string, unknown> };
  body?: { properties?: Record<string, unknown>; additionalProperties?: unknown };
}

function warningsOf(request: FastifyRequest, query: Record<string, unknown>, publicRoute: boolean): JournalWarning[] {
  const warnings: JournalWarning[] = [];
  const schema = request.routeOptions.schema as RouteSchema | undefined;
  if (!request.routeOptions.url) return warnings;
  const queryKeys = Object.keys(schema?.querystring?.properties ?? {});
  for (const key of Object.keys(query)) {
    if (!queryKeys.includes(key)) warnings.push({ code: 'unknown_query_parameter', message: `${key} is not a query parameter of this operation: it was ignored` });
  }
  const bodyKeys = schema?.body?.properties;
  const body = request.body;
  // A body that refuses fields it does not know (every operator route's) was answered 422 instead.
  if (bodyKeys && schema?.body?.additionalProperties !== false && body && typeof body === 'object' && !Array.isArray(body)) {
    for (const key of Object.keys(body)) {
      if (!(key in bodyKeys)) warnings.push({ code: 'unknown_body_field', message: `${key} is not a field of this operation's body: it was ignored` });
    }
  }
  if (publicRoute && request.headers['x-vendor-api-version'] === undefined) {
    warnings.push({ code: 'missing_api_version', message: `no X-Vendor-Api-Version header: the answer is version ${DEFAULT_API_VERSION}'s; name the version your client was written for` });
  }
  const perPage = Number(query.per_page);
  if ('per_page' in (schema?.querystring?.properties ?? {}) && Number.isFinite(perPage) && perPage > DEFAULT_PAGES.maxPerPage) {
    warnings.push({ code: 'per_page_clamped', message: `per_page ${query.per_page} is over the most a page holds: ${DEFAULT_PAGES.maxPerPage} were given` });
  }
  return warnings;
}

// ---------------------------------------------------------------------------------------------------
// The journal and its filters.

const FILTER_FIELDS = {
  method: Type.Optional(Type.String({ pattern: '^[A-Za-z]{1,16}$' })),
  path: Type.Optional(Type.String({ minLength: 1, maxLength: 2048 })),
  operation: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })),
  login: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })),
  app: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })),
  installation: Type.Optional(Type.String({ pattern: '^[0-9]{1,16}$' })),
  /** A token, whole or its last eight characters. */
  token: Type.Optional(Type.String({ minLength: 8, maxLength: 512 })),
  warning: Type.Optional(Type.String({ pattern: '^[a-z_]{1,64}$' })),
  status: Type.Optional(Type.String({ pattern: '^([1-5][0-9][0-9]|[1-5]xx)$' })),
  since: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
};
export const JournalFilter = Type.Object(FILTER_FIELDS, { additionalProperties: false });
export type JournalFilter = Static<typeof JournalFilter>;

function matcher(filter: JournalFilter): (entry: JournalEntry) => boolean {
  const path = filter.path === undefined ? null : glob(filter.path.replace(/^\/api\/v3(?=\/|$)/, '') || '/');
  let sinceId: number | null = null;
  let sinceAt: string | null = null;
  if (filter.since !== undefined) {
    if (/^\d+$/.test(filter.since)) sinceId = Number(filter.since);
    else {
      const at = Date.parse(filter.since);
      if (Number.isNaN(at)) throw invalidField('Journal', 'since', 'since is an entry id or an ISO 8601 time');
      sinceAt = new Date(at).toISOString();
    }
  }
  const method = filter.method?.toUpperCase();
  return (entry) =>
    (method === undefined || entry.method === method) &&
    (path === null || path.test(entry.path)) &&
    (filter.operation === undefined || entry.operation === filter.operation) &&
    (filter.login === undefined || entry.credential.login === filter.login) &&
    (filter.app === undefined || entry.credential.app === filter.app) &&
    (filter.installation === undefined || entry.credential.installation === Number(filter.installation)) &&
    (filter.token === undefined || entry.credential.token_last_eight === filter.token.slice(-8)) &&
    (filter.warning === undefined || entry.warnings.some((warning) => warning.code === filter.warning)) &&
    (filter.status === undefined || (filter.status.endsWith('xx') ? String(entry.status)[0] === filter.status[0] : entry.status === Number(filter.status))) &&
    (sinceId === null || entry.id > sinceId) &&
    (sinceAt === null || entry.at >= sinceAt);
}

export class Journal {
  #entries: JournalEntry[] = [];
  #nextId = 1;
  readonly #limit: number;

  constructor(limit: number) {
    this.#limit = limit;
  }

  add(entry: Omit<JournalEntry, 'id'>): void {
    this.#entries.push({ id: this.#nextId++, ...entry });
    if (this.#entries.length > this.#limit) this.#entries.splice(0, this.#entries.length - this.#limit);
  }

  /** Newest first. */
  find(filter: JournalFilter): JournalEntry[] {
    const matches = matcher(filter);
    const out: JournalEntry[] = [];
    for (let i = this.#entries.length - 1; i >= 0; i--) if (matches(this.#entries[i]!)) out.push(this.#entries[i]!);
    return out;
  }

  clear(): void {
    this.#entries = [];
  }
}

const journals = perServer((ctx) => new Journal(ctx.config.journal.entries));

/** The request journal of this server. */
export function journalOf(ctx: Context): Journal {
  return journals.of(ctx);
}

const UNJOURNALED = /^\/(?:healthz|readyz|metrics|openapi\.json|docs|_console|_admin\/requests|favicon\.ico)(?:[/?]|$)/;

/** The header the console sends on its own calls, which the journal leaves out. */
export const CONSOLE_HEADER = 'x-codehost-console';

declare module 'fastify' {
  interface FastifyRequest {
    journalStarted?: number;
  }
}

/**
 * The journal's two hooks: `start`, the first of every request (so duration_ms counts the gate,
 * authentication and injected delays), and `record`, which records each answer as it is sent (so
 * the entry is there before the client has read its answer).
 */
export function journalHooks(ctx: Context): { start: onRequestHookHandler; record: (request: FastifyRequest, reply: FastifyReply, payload: unknown) => Promise<unknown> } {
  const journal = journalOf(ctx);
  // The server's own secrets, masked wherever a request or an answer carries them.
  const knownSecrets = [ctx.config.adminToken, ctx.config.metricsToken, ctx.config.secretKey].filter((secret): secret is string => typeof secret === 'string' && secret.length >= 8);
  const slugs = new Map<number, string | null>();
  const appSlug = async (id: number | null) => {
    if (id === null) return null;
    if (!slugs.has(id)) slugs.set(id, (await findAppBy(ctx.db.kysely, { id }))?.slug ?? null);
    return slugs.get(id) ?? null;
  };
  const start: onRequestHookHandler = (request, _reply, done) => {
    request.journalStarted = performance.now();
    done();
  };
  const record = async (request: FastifyRequest, reply: FastifyReply, payload: unknown) => {
    const url = request.url;
    if (UNJOURNALED.test(url) || request.headers[CONSOLE_HEADER] !== undefined) return payload;
    try {
      const queryAt = url.indexOf('?');
      const path = queryAt < 0 ? url : url.slice(0, queryAt);
      const query = Object.fromEntries(new URLSearchParams(queryAt < 0 ? '' : url.slice(queryAt + 1)));
      const config = request.routeOptions.config as { access?: unknown };
      const schema = request.routeOptions.schema as RouteSchema | undefined;
      const routeUrl = request.routeOptions.url;
      const operation = schema?.operationId ?? (routeUrl ? operationId(request.operator ? 'admin' : 'meta', `${request.method} ${routeUrl.replace(/^\/_admin/, '').replace(/[:{}]/g, '')}`) : null);
      const warnings = warningsOf(request, query, Boolean(config.access) && !request.operator);
      // A route codehost does not serve: the caller resolved as the API would (its answer is sent already).
      const unserved = !routeUrl && !path.startsWith('/_admin');
      let principal: Principal = request.principal;
      let explanation = request.explanation ?? (reply.statusCode >= 400 ? principal.explanation ?? null : null);
      if (unserved) {
        ({ principal, explanation } = await callerOf(request.headers.authorization));
        warnings.push(await unservedWarning(request.method, path));
      }
      const fault = request.injectedFault ?? null;
      if (fault) warnings.push(faultWarning(fault, reply.statusCode));
      let credential: JournalEntry['credential'] = { kind: null, login: null, app: null, installation: null, token_last_eight: null };
      if (request.operator) credential = { ...credential, kind: reply.statusCode === 401 ? null : 'admin' };
      else if (principal.type === 'user') credential = { kind: principal.kind, login: principal.user.login, app: await appSlug(principal.appId), installation: null, token_last_eight: lastEight(request) };
      else if (principal.type === 'installation') credential = { kind: 'installation', login: null, app: await appSlug(principal.appId), installation: principal.installationId, token_last_eight: lastEight(request) };
      else if (principal.type === 'app') credential = { ...credential, kind: principal.kind, app: principal.app.slug };
      else if (explanation?.credential) credential = { ...credential, kind: explanation.credential.kind, token_last_eight: explanation.credential.token_last_eight ?? null };
      const access = config.access && !request.operator && !request.explanation ? { used: principal.used ?? null, held: heldBy(principal) } : null;
      // The request first, so that what it held is masked in the answer too.
      const seen: Seen = new Set(knownSecrets);
      const requestPart = { headers: maskHeaders(request.headers, seen), body: keptBody(request.body, seen) };
      const maskedQuery = maskValue(query, seen) as Record<string, unknown>;
      const responsePart = { headers: maskHeaders(reply.getHeaders(), seen), body: keptBody(payload, seen) };
      journal.add(maskSeen({
        at: ctx.clock.now().toISOString(),
        method: request.method,
        path,
        query: maskedQuery,
        operation,
        credential,
        access,
        explanation,
        fault,
        status: reply.statusCode,
        duration_ms: Math.round((performance.now() - (request.journalStarted ?? performance.now())) * 10) / 10,
        request: requestPart,
        response: responsePart,
        warnings,
      }, seen) as Omit<JournalEntry, 'id'>);
    } catch (err) {
      request.log.warn({ err }, 'the request journal could not record a request');
    }
    return payload;
  };
  /** The caller of a request no route served, as the API's caller step would resolve it, and why it was refused. */
  const callerOf = async (authorization: string | undefined): Promise<{ principal: Principal; explanation: Explanation | null }> => {
    try {
      return { principal: await authenticate(ctx.db.kysely, ctx.clock, authorization, { basicApp: false }), explanation: null };
    } catch (error) {
      return { principal: { type: 'anonymous', kind: null }, explanation: explanationOfError(error) ?? null };
    }
  };
  return { start, record };
}

/** The last eight characters of the token a request presented (how fault rules name a token too). */
function lastEight(request: FastifyRequest): string | null {
  const value = /^\S+\s+(\S+)\s*$/.exec(request.headers.authorization ?? '')?.[1];
  if (!value) return null;
  if (!/^basic$/i.test(request.headers.authorization!.split(/\s/, 1)[0]!)) return value.slice(-8);
  const decoded = Buffer.from(value, 'base64').toString('utf8');
  return decoded.slice(decoded.indexOf(':') + 1).slice(-8);
}

async function unservedWarning(method: string, path: string): Promise<JournalWarning> {
  const operation = await platformOperation(method, path).catch(() => null);
  return {
    code: 'unserved_operation',
    message: operation
      ? `${operation.method} ${operation.template} (${operation.id}) is an operation of the platform codehost does not serve`
      : `${method} ${path.replace(/^\/api\/v3(?=\/|$)/, '') || '/'} is no operation of the platform: check the method and the path`,
  };
}

function faultWarning(fault: InjectedFault, status: number): JournalWarning {
  const match = Object.entries(fault.match).filter(([, value]) => value !== null).map(([key, value]) => `${key} ${value}`).join(', ') || 'every request';
  return {
    code: 'injected_fault',
    message: fault.effect === 'delay'
      ? `fault rule ${fault.id} (delay, matching ${match}) delayed this request`
      : `fault rule ${fault.id} (${fault.effect}, matching ${match}) answered this ${status}: not codehost's own answer`,
  };
}

const hidden = { hide: true, tags: ['admin'] } as const;
const Page = {
  per_page: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000 })),
  page: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000 })),
};

export function journalRoutes(app: Api, ctx: Context): void {
  const journal = journalOf(ctx);

  app.get('/_admin/requests', {
    schema: { ...hidden, querystring: Type.Object({ ...FILTER_FIELDS, ...Page }, { additionalProperties: false }) },
  }, async (request) => {
    const { per_page: perPage = 30, page = 1, ...filter } = request.query as JournalFilter & { per_page?: number; page?: number };
    return journal.find(filter).slice((page - 1) * perPage, page * perPage);
  });

  // What each credential's calls needed beside what it held (./permissions-used.ts), over the entries that match.
  app.get('/_admin/requests/permissions-used', {
    schema: { ...hidden, querystring: JournalFilter },
  }, async (request) => permissionsUsed(journal.find(request.query as JournalFilter)));

  app.post('/_admin/requests/count', { schema: { ...hidden, body: JournalFilter } }, async (request) => {
    return { count: journal.find(request.body).length };
  });

  app.delete('/_admin/requests', { schema: hidden }, async (_request, reply) => {
    journal.clear();
    return reply.code(204).send();
  });
}
