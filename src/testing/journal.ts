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
import { authenticate, explanationOfError, findAppBy, heldBy, type Explanation, type Principal } from '../core/access/index.ts';
import type { InjectedFault } from './faults.ts';
import { platformOperation } from './operations.ts';
import { withoutApiPrefix } from '../platform/urls.ts';
import { permissionsUsed } from './permissions-used.ts';

import type { JournalEntry, JournalWarning } from './journal-entry.ts';
import { maskedParts, maskSeen } from './masking.ts';
import { requestedApiVersion, type VendorNames } from '../platform/vendor.ts';

export type { JournalEntry, JournalWarning } from './journal-entry.ts';

// ---------------------------------------------------------------------------------------------------
// Warnings: what the route accepted but a careful client should fix.

interface RouteSchema {
  hide?: boolean;
  operationId?: string;
  querystring?: { properties?: Record<string, unknown> };
  body?: { properties?: Record<string, unknown>; additionalProperties?: unknown };
}

function warningsOf(names: VendorNames, request: FastifyRequest, query: Record<string, unknown>, publicRoute: boolean): JournalWarning[] {
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
  if (publicRoute && requestedApiVersion(names, request.headers) === undefined) {
    warnings.push({ code: 'missing_api_version', message: `no ${names.written.apiVersion[0]} header: the answer is version ${DEFAULT_API_VERSION}'s; name the version your client was written for` });
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
  const path = filter.path === undefined ? null : glob(withoutApiPrefix(filter.path) || '/');
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
      const warnings = warningsOf(ctx.vendor, request, query, Boolean(config.access) && !request.operator);
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
      const access = config.access && !request.operator && !explanation ? { used: principal.used ?? null, held: heldBy(principal) } : null;
      // The request first, so that what it held is masked in the answer too.
      const { seen, parts } = maskedParts(knownSecrets, { query, requestHeaders: request.headers, requestBody: request.body, responseHeaders: reply.getHeaders(), responseBody: payload });
      // The parts are masked already (the seen secrets too); what else an entry holds that a client sent, once.
      const told = maskSeen({ path, operation, credential, access, explanation, fault, warnings }, seen) as Pick<JournalEntry, 'path' | 'operation' | 'credential' | 'access' | 'explanation' | 'fault' | 'warnings'>;
      journal.add({
        at: ctx.clock.now().toISOString(),
        method: request.method,
        path: told.path,
        query: parts.query,
        operation: told.operation,
        credential: told.credential,
        access: told.access,
        explanation: told.explanation,
        fault: told.fault,
        status: reply.statusCode,
        duration_ms: Math.round((performance.now() - (request.journalStarted ?? performance.now())) * 10) / 10,
        request: parts.request,
        response: parts.response,
        warnings: told.warnings,
      } as Omit<JournalEntry, 'id'>);
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
      : `${method} ${withoutApiPrefix(path) || '/'} is no operation of the platform: check the method and the path`,
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
