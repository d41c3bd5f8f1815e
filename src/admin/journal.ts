// The request journal (spec/admin-api.md "Test support"): every API request, public and admin, with
// the operation it matched, who made it with which credential, its status and duration, its headers
// and bodies (bounded, secrets masked) and `warnings`: what codehost accepted but a careful client
// should fix. Kept in this process's memory (the newest CODEHOST_JOURNAL_ENTRIES): several processes
// each keep their own. On by default outside production mode; CODEHOST_JOURNAL turns it on or off.
// Left out: the journal's own routes, /healthz, /readyz, /metrics, /docs, /openapi.json and /_console.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type, type Static } from 'typebox';
import { findAppBy } from '../core/apps/store.ts';
import type { Api, Context } from '../platform/context.ts';
import { perServer } from '../platform/per-server.ts';
import { invalidField, notFound } from '../platform/errors.ts';
import { glob } from '../platform/faults.ts';
import { DEFAULT_API_VERSION } from '../platform/http.ts';
import { operationId } from '../platform/openapi.ts';
import { DEFAULT_PAGES } from '../platform/pagination.ts';

/** The most of a request's or an answer's body an entry keeps (characters). */
export const BODY_LIMIT = 16 * 1024;
const MASK = '[masked]';

export interface JournalWarning {
  code: 'unknown_query_parameter' | 'unknown_body_field' | 'missing_api_version' | 'per_page_clamped';
  message: string;
}

export interface JournalEntry {
  id: number;
  at: string;
  method: string;
  path: string;
  query: Record<string, unknown>;
  operation: string | null;
  credential: { kind: string | null; login: string | null; app: string | null; installation: number | null };
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

/**
 * Secrets inside any text: tokens of every kind (`chp_…`, `chpat_…`, `cho_…`), JWTs, PEM blocks, a
 * signed URL's signature or a token in a query string, and a JSON secret field in a body too long
 * to parse (cut at BODY_LIMIT).
 */
const SECRET_TEXT: [RegExp, (match: string, prefix: string) => string][] = [
  [/\bch[a-z]{1,4}_[A-Za-z0-9_]{8,}/g, (match) => lastFour(match)],
  [/\beyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+/g, (match) => lastFour(match)],
  [/-----BEGIN [A-Z ]+-----[\s\S]*?(?:-----END [A-Z ]+-----|$)/g, () => MASK],
  [/([?&](?:signature|sig|token|access_token|client_secret|code)=)[^&#"\s]*/gi, (_match, prefix) => `${prefix}${MASK}`],
  [/("[A-Za-z_]*(?:token|secret|password|private_key|signature)[A-Za-z_]*"\s*:\s*")(?:[^"\\]|\\.)*"?/gi, (_match, prefix) => `${prefix}${MASK}"`],
];

/** One pass that every text holding a secret of SECRET_TEXT matches (a superset): most texts hold none. */
const MAY_HOLD_SECRET = /ch[a-z]{1,4}_|eyJ|-----BEGIN |[?&](?:signature|sig|token|access_token|client_secret|code)=|"[A-Za-z_]*(?:token|secret|password|private_key|signature)/i;

function maskText(text: string): string {
  if (!MAY_HOLD_SECRET.test(text)) return text;
  let out = text;
  for (const [pattern, replace] of SECRET_TEXT) out = out.replace(pattern, replace as (match: string, ...rest: string[]) => string);
  return out;
}

function maskValue(value: unknown, depth = 0): unknown {
  if (typeof value === 'string') return maskText(value);
  if (value === null || typeof value !== 'object') return value;
  if (depth > 32) return MASK;
  if (Array.isArray(value)) return value.map((item) => maskValue(item, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) {
    out[key] = SECRET_KEY.test(key) && item !== null && typeof item !== 'boolean' && typeof item !== 'number' && !(key === 'token_last_eight')
      ? (typeof item === 'string' ? lastFour(item) : MASK)
      : maskValue(item, depth + 1);
  }
  return out;
}

function maskAuthorization(value: string): string {
  const [scheme, credential = ''] = value.split(/\s+/, 2);
  if (/^basic$/i.test(scheme!)) {
    const decoded = Buffer.from(credential, 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    return `${scheme} ${colon < 0 ? MASK : `${maskText(decoded.slice(0, colon))}:${MASK}`}`;
  }
  return `${scheme} ${lastFour(credential)}`;
}

function maskHeaders(headers: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(headers)) {
    const lower = name.toLowerCase();
    if (value === undefined) continue;
    if (lower === 'authorization' || lower === 'proxy-authorization') out[lower] = maskAuthorization(String(value));
    else if (lower === 'cookie' || lower === 'set-cookie' || lower.includes('signature') || lower.includes('secret') || lower.includes('token')) out[lower] = MASK;
    else out[lower] = Array.isArray(value) ? value.map((item) => maskText(String(item))) : maskText(String(value));
  }
  return out;
}

/** A body as kept: JSON parsed and masked, other text masked and cut at BODY_LIMIT. */
function keptBody(body: unknown): unknown {
  if (body === undefined || body === null || body === '') return null;
  if (Buffer.isBuffer(body)) return `(${body.length} bytes)`;
  if (typeof body === 'object' && typeof (body as { pipe?: unknown }).pipe === 'function') return '(a stream)';
  // Too long to keep whole: cut first (a list of thousands is not parsed for the journal), then masked.
  if (typeof body === 'string' && body.length > BODY_LIMIT) return `${maskText(body.slice(0, BODY_LIMIT))}… (${body.length - BODY_LIMIT} more characters)`;
  let value = body;
  if (typeof body === 'string') {
    try {
      value = JSON.parse(body);
    } catch {
      value = body;
    }
  }
  const masked = maskValue(value);
  // A text within BODY_LIMIT is kept whole once masked, without serializing it again to measure it:
  // masking lengthens it at most twofold (a secret field's `[]` becomes `"[masked]"`), so still bounded.
  if (typeof body === 'string') return masked;
  const text = typeof masked === 'string' ? masked : JSON.stringify(masked);
  if (text.length <= BODY_LIMIT) return masked;
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

  save(): JournalEntry[] {
    return structuredClone(this.#entries);
  }

  replace(entries: JournalEntry[]): void {
    this.#entries = structuredClone(entries).slice(-this.#limit);
    this.#nextId = Math.max(this.#nextId, ...entries.map((entry) => entry.id + 1));
  }
}

const journals = perServer((ctx) => new Journal(ctx.config.journal.entries));

/** The request journal of this server. */
export function journalOf(ctx: Context): Journal {
  return journals.of(ctx);
}

const UNJOURNALED = /^\/(?:healthz|readyz|metrics|openapi\.json|docs|_console|_admin\/requests)(?:[/?]|$)/;

declare module 'fastify' {
  interface FastifyRequest {
    journalStarted?: number;
  }
}

/** Records each answer as it is sent (so the entry is there before the client has read its answer). */
export function installJournal(app: Api, ctx: Context): void {
  if (!ctx.config.journal.enabled) return;
  const journal = journalOf(ctx);
  const slugs = new Map<number, string | null>();
  const appSlug = async (id: number | null) => {
    if (id === null) return null;
    if (!slugs.has(id)) slugs.set(id, (await findAppBy(ctx.db.kysely, { id }))?.slug ?? null);
    return slugs.get(id) ?? null;
  };
  app.addHook('onRequest', async (request) => {
    request.journalStarted = performance.now();
  });
  app.addHook('onSend', async (request: FastifyRequest, reply: FastifyReply, payload: unknown) => {
    const url = request.url;
    if (UNJOURNALED.test(url)) return payload;
    try {
      const queryAt = url.indexOf('?');
      const path = queryAt < 0 ? url : url.slice(0, queryAt);
      const query = Object.fromEntries(new URLSearchParams(queryAt < 0 ? '' : url.slice(queryAt + 1)));
      const config = request.routeOptions.config as { admin?: boolean; access?: unknown };
      const schema = request.routeOptions.schema as RouteSchema | undefined;
      const routeUrl = request.routeOptions.url;
      const operation = schema?.operationId ?? (routeUrl ? operationId(config.admin ? 'admin' : 'meta', `${request.method} ${routeUrl.replace(/^\/_admin/, '').replace(/[:{}]/g, '')}`) : null);
      const principal = request.principal;
      let credential: JournalEntry['credential'] = { kind: null, login: null, app: null, installation: null };
      if (config.admin) credential = { ...credential, kind: reply.statusCode === 401 ? null : 'admin' };
      else if (principal?.type === 'user') credential = { kind: principal.kind, login: principal.user.login, app: await appSlug(principal.appId), installation: null };
      else if (principal?.type === 'installation') credential = { kind: 'installation', login: null, app: await appSlug(principal.appId), installation: principal.installationId };
      else if (principal?.type === 'app') credential = { kind: principal.kind, login: null, app: principal.app.slug, installation: null };
      journal.add({
        at: new Date().toISOString(),
        method: request.method,
        path,
        query: maskValue(query) as Record<string, unknown>,
        operation,
        credential,
        status: reply.statusCode,
        duration_ms: Math.round((performance.now() - (request.journalStarted ?? performance.now())) * 10) / 10,
        request: { headers: maskHeaders(request.headers), body: keptBody(request.body) },
        response: { headers: maskHeaders(reply.getHeaders()), body: keptBody(payload) },
        warnings: warningsOf(request, query, Boolean(config.access) && !config.admin),
      });
    } catch (err) {
      request.log.warn({ err }, 'the request journal could not record a request');
    }
    return payload;
  });
}

const admin = { admin: true } as const;
const hidden = { hide: true, tags: ['admin'] } as const;
const Page = {
  per_page: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000 })),
  page: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000 })),
};

export function journalRoutes(app: Api, ctx: Context): void {
  const journal = journalOf(ctx);
  const enabled = () => {
    if (!ctx.config.journal.enabled) throw notFound();
  };

  app.get('/_admin/requests', {
    config: admin,
    schema: { ...hidden, querystring: Type.Object({ ...FILTER_FIELDS, ...Page }, { additionalProperties: false }) },
  }, async (request) => {
    enabled();
    const { per_page: perPage = 30, page = 1, ...filter } = request.query as JournalFilter & { per_page?: number; page?: number };
    return journal.find(filter).slice((page - 1) * perPage, page * perPage);
  });

  app.post('/_admin/requests/count', { config: admin, schema: { ...hidden, body: JournalFilter } }, async (request) => {
    enabled();
    return { count: journal.find(request.body).length };
  });

  app.delete('/_admin/requests', { config: admin, schema: hidden }, async (_request, reply) => {
    enabled();
    journal.clear();
    return reply.code(204).send();
  });
}
