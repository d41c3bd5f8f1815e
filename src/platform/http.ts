// The request conventions every public route shares: version check, (the caller: core/callers),
// schema validation, ETag / 304. Also the platform's error bodies, the
// JSON body parser, the 404 for unknown routes and the common response headers.
import { hash } from 'node:crypto';
import Ajv, { type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import fastJson from 'fast-json-stringify';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { classifyDataError, databaseUnavailable } from '../db/errors.ts';
import type { Context } from './context.ts';
import { isAdminRequest } from './cors.ts';
import { bodyBoundsError } from './bounds.ts';
import { ApiError, documentationUrl, serviceUnavailable, validationFailed, type ReferencedOperation, type ValidationError } from './errors.ts';
import { clientAddress, rateLimitHeaders, type RateLimitKey } from './rate-limit.ts';
import { forgetRouteConfig, routeConfig } from './route-config.ts';
import { ADMIN_TOKEN_HASH, findSetting } from './settings-store.ts';
import { isStorableText } from './schemas.ts';
import { referenceUrl, type Urls } from './urls.ts';
import { bearerCredential, hashSecret, secretMatches } from './tokens.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** An operator route: the admin token is required. */
    admin?: boolean;
    /** The status of a request that fails its schema, where the platform documents 400 rather than 422. */
    invalidStatus?: 400;
    /** Validation errors are strings, as in the platform's simple validation error body (`errors: ["…"]`). */
    errorStrings?: boolean;
  }
  interface FastifyRequest {
    /** The rate-limit key the request was counted under (a 304 refunds it). */
    rateLimitKey: string | null;
  }
}

/**
 * The version check of every public route: `X-Vendor-Api-Version` (default 2022-11-28), 400 for
 * others. Every answer says which version it is: the 400 and answers that never reach a route name
 * the default.
 */
export function selectApiVersion(request: FastifyRequest, reply: FastifyReply): void {
  const requested = request.headers['x-vendor-api-version'];
  const version = typeof requested === 'string' ? requested : DEFAULT_API_VERSION;
  const known = (API_VERSIONS as readonly string[]).includes(version);
  reply.header('x-vendor-api-version-selected', known ? version : DEFAULT_API_VERSION);
  if (!known) throw new ApiError(400, `No handler found for API version '${version}'. Supported versions: ${API_VERSIONS.join(', ')}.`);
}

/** The rate-limit key and hourly budget of a caller without (valid) credentials: its IP. */
export function anonymousRateLimit(ctx: Context, address: string): [RateLimitKey, number] {
  return [`ip:${address}`, ctx.config.rateLimit.anonymousPerHour];
}

/**
 * An answer given before the caller is known (unknown route, bad version, bad credentials) carries
 * the rate-limit headers of the IP's anonymous budget, read without counting.
 */
export async function anonymousRateLimitHeaders(ctx: Context, request: FastifyRequest, reply: FastifyReply): Promise<void> {
  if (reply.hasHeader('x-ratelimit-limit')) return;
  reply.headers(rateLimitHeaders(await ctx.rateLimiter.peek(...anonymousRateLimit(ctx, clientAddress(request)))));
}

/** A query value the platform reads as a boolean: `true`/`false` in any case, `1`/`0`. */
export function queryBoolean(value: unknown): unknown {
  if (typeof value !== 'string') return value;
  const lower = value.toLowerCase();
  return lower === 'true' || lower === '1' ? true : lower === 'false' || lower === '0' ? false : value;
}

/** The dotted path of the first string (key or value) holding a NUL in a parsed JSON value, or null. */
export function nulField(value: unknown, path = '', depth = 0): string | null {
  if (typeof value === 'string') return isStorableText(value) ? null : path;
  if (value === null || typeof value !== 'object' || depth > 64) return null;
  for (const [key, item] of Object.entries(value)) {
    const field = path ? `${path}.${key}` : key;
    if (!isStorableText(key)) return field;
    const found = nulField(item, field, depth + 1);
    if (found !== null) return found;
  }
  return null;
}

/**
 * No name, id or text the platform stores holds a NUL (PostgreSQL's text cannot): a path value with
 * one names nothing (404), a query or body value with one is invalid (422), on both databases alike.
 */
export function refuseNul(request: FastifyRequest): void {
  for (const value of Object.values((request.params ?? {}) as Record<string, unknown>)) {
    if (typeof value === 'string' && !isStorableText(value)) throw new ApiError(404, 'Not Found');
  }
  for (const [part, value] of [['query', request.query], ['body', request.body]] as const) {
    const field = nulField(value);
    if (field !== null) throw validationFailed([{ resource: part, field, code: 'invalid', message: `${field || part} must not contain a NUL character` }]);
  }
}

/**
 * A request body as the platform reads it, whatever its content type: blank is no body, else JSON
 * (400 Problems parsing JSON), bounded before any schema or service walks it (./bounds.ts).
 */
export function parseJsonBody(text: string): unknown {
  if (text.trim() === '') return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new ApiError(400, 'Problems parsing JSON');
  }
  const excess = bodyBoundsError(parsed);
  if (excess) throw excess;
  return parsed;
}

/** The names of a query schema's boolean properties. */
export function booleanQueryKeys(schema: unknown): string[] {
  const properties = (schema as { properties?: Record<string, { type?: unknown }> } | undefined)?.properties ?? {};
  return Object.entries(properties).filter(([, property]) => property?.type === 'boolean').map(([key]) => key);
}

export const API_VERSIONS = ['2022-11-28', '2026-03-10'] as const;
export const DEFAULT_API_VERSION = '2022-11-28';

/** Query strings are coerced (`per_page=5` is a number); bodies are not (`"5"` is not an integer). */
function validatorCompilers(onFirstUse: boolean) {
  const common = { allErrors: false, strict: false, useDefaults: true, removeAdditional: false } as const;
  const query = new Ajv.default({ ...common, coerceTypes: 'array' });
  const body = new Ajv.default({ ...common, coerceTypes: false });
  addFormats.default(query);
  addFormats.default(body);
  return ({ schema, httpPart }: { schema: object; httpPart?: string }) => {
    const compile = () => (httpPart === 'body' ? body : query).compile(schema);
    if (!onFirstUse) return compile();
    let compiled: ValidateFunction | undefined;
    // Fastify reads a failed validation's errors from the function it was given.
    function validate(data: unknown): boolean {
      compiled ??= compile();
      const valid = compiled(data) as boolean;
      validate.errors = compiled.errors;
      return valid;
    }
    validate.errors = null as ValidateFunction['errors'];
    return validate;
  };
}

/** Response schemas compiled to serializers (fast-json-stringify, as Fastify's default does) when a route first answers. */
function serializerOnFirstUse({ schema }: { schema: object }) {
  let serialize: ((data: unknown) => string) | undefined;
  return (data: unknown) => (serialize ??= fastJson(schema))(data);
}

interface AjvError {
  keyword: string;
  instancePath: string;
  params: Record<string, unknown>;
  message?: string;
}

/** Ajv's errors in the platform's `{resource, field, code}` form. */
function validationErrors(errors: AjvError[], part: string): ValidationError[] {
  return errors.map((error) => {
    const path = error.instancePath.replace(/^\//, '').replace(/\//g, '.');
    if (error.keyword === 'required') {
      const field = [path, error.params.missingProperty].filter(Boolean).join('.');
      return { resource: part, field, code: 'missing_field' };
    }
    if (error.keyword === 'additionalProperties') {
      const field = [path, error.params.additionalProperty].filter(Boolean).join('.');
      return { resource: part, field, code: 'invalid', message: `${field} is not a permitted key` };
    }
    return { resource: part, field: path, code: 'invalid', message: `${path || part} ${error.message ?? 'is invalid'}` };
  });
}

/** One validation error as a sentence, for the routes whose errors are strings. */
function errorSentence(error: ValidationError): string {
  if (error.message) return error.message;
  if (error.code === 'already_exists') return `${error.field.charAt(0).toUpperCase()}${error.field.slice(1)} has already been taken`;
  if (error.code === 'missing_field' || error.code === 'missing') return `${error.field} is missing`;
  return `${error.field} is invalid`;
}

/** Where an answer to this request points for its documentation: the reference, at the route's operation (none for an unknown route). */
export function requestDocumentation(urls: Urls, request: FastifyRequest): string {
  return documentationUrl(referenceUrl(urls), request.routeOptions.schema as ReferencedOperation | undefined);
}

function errorReply(urls: Urls, reply: FastifyReply, error: ApiError): FastifyReply {
  if (error.headers) reply.headers(error.headers);
  const body = error.body(requestDocumentation(urls, reply.request));
  if (error.errors && routeConfig(reply.request)?.errorStrings) body.errors = error.errors.map(errorSentence);
  return reply.code(error.status).type('application/json; charset=utf-8').send(body);
}

/**
 * Whether the client's copy is current: If-None-Match (when sent) against the reply's ETag, by weak
 * comparison (the opaque tags equal, either one weak or not), else If-Modified-Since against its
 * Last-Modified.
 */
export function unchanged(request: FastifyRequest, reply: FastifyReply): boolean {
  const etag = reply.getHeader('etag');
  const ifNoneMatch = request.headers['if-none-match'];
  const lastModified = reply.getHeader('last-modified');
  const ifModifiedSince = request.headers['if-modified-since'];
  return ifNoneMatch !== undefined
    ? typeof etag === 'string' && ifNoneMatch.split(',').some((tag) => opaqueTag(tag.trim()) === opaqueTag(etag))
    : ifModifiedSince !== undefined && typeof lastModified === 'string' && Date.parse(lastModified) <= Date.parse(ifModifiedSince);
}

/** An entity tag without its weakness mark: `W/"x"` and `"x"` are the same tag to If-None-Match. */
function opaqueTag(tag: string): string {
  return tag.startsWith('W/') ? tag.slice(2) : tag;
}

/**
 * Makes the reply a 304 (no body, no content type) and refunds the request's rate-limit count. A
 * route that decides from its validators before doing the work (`unchanged`) answers with
 * `sendNotModified`.
 */
export function answerNotModified(ctx: Context, request: FastifyRequest, reply: FastifyReply): void {
  reply.code(304);
  reply.removeHeader('content-type');
  reply.removeHeader('content-length');
  if (request.rateLimitKey) {
    ctx.rateLimiter.refund(request.rateLimitKey);
    const remaining = Number(reply.getHeader('x-ratelimit-remaining'));
    const used = Number(reply.getHeader('x-ratelimit-used'));
    if (Number.isFinite(remaining)) reply.header('x-ratelimit-remaining', String(remaining + 1));
    if (Number.isFinite(used)) reply.header('x-ratelimit-used', String(Math.max(0, used - 1)));
  }
}

/**
 * A route's early 304, decided from its validators before the work: the reply made a 304 and sent
 * with no content at all (`send(null)` would write `null` and its Content-Length).
 */
export async function sendNotModified(ctx: Context, request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
  answerNotModified(ctx, request, reply);
  return reply.send();
}

/** The largest request body codehost reads (Fastify's bodyLimit); over it, 413 Payload Too Large. */
export const BODY_LIMIT_BYTES = 5 * 1024 * 1024;
/** Of a body over the limit, what codehost still reads and throws away before it closes the connection. */
const DISCARD_BYTES = 2 * BODY_LIMIT_BYTES;
const DISCARD_MS = 10_000;

/**
 * A body over the limit is answered 413 before the client (or the reverse proxy passing on the body
 * it buffered) has sent all of it. Fastify marks that answer `Connection: close`, and Node then
 * closes the socket with the unsent rest arriving: the peer gets a reset, which may discard the 413
 * it has not read yet (nginx then answers 502). Instead the connection stays open and the rest of the
 * body is read and thrown away, so the peer gets the 413; a body that goes on beyond DISCARD_BYTES
 * more, or past DISCARD_MS, closes the connection.
 */
function discardRestOfBody(request: FastifyRequest, reply: FastifyReply): void {
  reply.removeHeader('connection');
  const { raw } = request;
  const socket = raw.socket;
  if (raw.complete || !socket || socket.destroyed) return;
  // Counted as it is read (a timer that looked now and then let a fast sender on loopback push 40 MB
  // between two looks): the connection closes as soon as the rest goes past the bound.
  let discarded = 0;
  const timer = setTimeout(() => socket.destroy(), DISCARD_MS);
  timer.unref();
  const stop = () => clearTimeout(timer);
  raw.on('data', (chunk: Buffer) => {
    discarded += chunk.length;
    if (discarded > DISCARD_BYTES) {
      stop();
      socket.destroy();
    }
  });
  raw.once('end', stop);
  raw.once('close', stop);
}

/**
 * `compileSchemas: 'on first use'` (the testing helper): a route's validators and serializers are
 * compiled when a request first needs them, not at start, where compiling all of them took most of
 * a start (docs/performance.md, "The helper's start"). A server that answers many routes compiles
 * them at start (the default), so no client waits for a compilation.
 */
export interface ConventionOptions {
  compileSchemas?: 'at start' | 'on first use';
}

export function installConventions(app: FastifyInstance, ctx: Context, options: ConventionOptions = {}): void {
  const onFirstUse = options.compileSchemas === 'on first use';
  app.setValidatorCompiler(validatorCompilers(onFirstUse));
  if (onFirstUse) app.setSerializerCompiler(serializerOnFirstUse);
  app.decorateRequest('rateLimitKey', null);

  // The platform reads every body as JSON, whatever its content type.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'string' }, (_request, body, done) => {
    let parsed: unknown;
    try {
      parsed = parseJsonBody(String(body));
    } catch (error) {
      return done(error as ApiError, undefined);
    }
    done(null, parsed);
  });

  // The hooks every request runs are not async where nothing in them waits: no promise per hook.
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-vendor-request-id', request.id);
    reply.header('x-vendor-media-type', 'vendor.v3; format=json');
    if (!routeConfig(request).admin) return done();
    checkAdmin(ctx, request).then(() => done(), done);
  });

  // A route with a body schema and no body is validated as `{}`, so missing fields are 422s.
  // Boolean query parameters are read as the platform reads them (`?all=True`, `?all=1`): Ajv's
  // coercion knows only `true` and `false`.
  const booleanKeys = new Map<object, string[]>();
  app.addHook('preValidation', (request, _reply, done) => {
    refuseNul(request);
    const schema = request.routeOptions.schema;
    if (request.body === undefined && schema?.body) request.body = {};
    if (!schema?.querystring) return done();
    let keys = booleanKeys.get(schema.querystring);
    if (!keys) booleanKeys.set(schema.querystring, (keys = booleanQueryKeys(schema.querystring)));
    const query = request.query as Record<string, unknown> | undefined;
    for (const key of keys) if (query && key in query) query[key] = queryBoolean(query[key]);
    done();
  });

  // A create answers where the new resource is, in `Location`: its API URL, which every
  // representation names as `url` (built from the configured API URL, /api/v3 included), so a
  // create route says it once, in what it answers.
  app.addHook('preSerialization', (_request, reply, payload, done) => {
    const url = reply.statusCode === 201 ? (payload as { url?: unknown } | null)?.url : undefined;
    if (typeof url === 'string' && url.startsWith(`${ctx.urls.api}/`)) reply.header('location', url);
    done(null, payload);
  });

  app.addHook('onSend', (request, reply, payload, done) => {
    if (request.method !== 'GET' || reply.statusCode !== 200) return done(null, payload);
    // A route that knows what its body is made of gives its own tag (one that changes whenever the
    // body would), and may answer bytes; otherwise the tag is the hash of a text body.
    const given = reply.getHeader('etag');
    if (typeof payload !== 'string' && !(typeof given === 'string' && Buffer.isBuffer(payload))) return done(null, payload);
    const etag = typeof given === 'string' ? given : `W/"${hash('sha1', payload as string, 'hex')}"`;
    reply.header('etag', etag);
    if (!unchanged(request, reply)) return done(null, payload);
    answerNotModified(ctx, request, reply);
    done(null, null); // no content: Fastify then sets no Content-Length (an empty string would be `0`)
  });

  // An unknown route answers as the API does, version and rate-limit headers included (not under /_admin).
  app.setNotFoundHandler(async (request, reply) => {
    forgetRouteConfig(request);
    if (!isAdminRequest(request)) {
      const requested = request.headers['x-vendor-api-version'];
      const known = typeof requested === 'string' && (API_VERSIONS as readonly string[]).includes(requested);
      reply.header('x-vendor-api-version-selected', known ? requested : DEFAULT_API_VERSION);
      await anonymousRateLimitHeaders(ctx, request, reply);
    }
    return errorReply(ctx.urls, reply, new ApiError(404, 'Not Found'));
  });

  app.setErrorHandler((error: FastifyError | ApiError, request, reply) => {
    if (error instanceof ApiError) return errorReply(ctx.urls, reply, error);
    const fastifyError = error as FastifyError & { validation?: AjvError[]; validationContext?: string };
    if (fastifyError.validation) {
      const part = fastifyError.validationContext ?? 'body';
      const root = fastifyError.validation.find((e) => e.instancePath === '' && e.keyword === 'type');
      if (part === 'body' && root) return errorReply(ctx.urls, reply, new ApiError(400, 'Body should be a JSON object'));
      // A path id outside the row ids (0, or above the largest) names no resource: Not Found, as for
      // any unknown id.
      if (part === 'params' && fastifyError.validation.every((e) => e.keyword === 'maximum' || e.keyword === 'minimum')) {
        return errorReply(ctx.urls, reply, new ApiError(404, 'Not Found'));
      }
      const errors = validationErrors(fastifyError.validation, part);
      if (routeConfig(request)?.invalidStatus === 400) {
        return errorReply(ctx.urls, reply, new ApiError(400, `Invalid request: ${errors.map(errorSentence).join('; ')}`, { errors }));
      }
      return errorReply(ctx.urls, reply, validationFailed(errors));
    }
    if (fastifyError.code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
      discardRestOfBody(request, reply);
      return errorReply(ctx.urls, reply, new ApiError(413, 'Payload Too Large'));
    }
    const unavailable = databaseUnavailable(error);
    if (unavailable) {
      request.log.warn({ err: error, reason: unavailable }, 'database unavailable; answered 503');
      return errorReply(ctx.urls, reply, serviceUnavailable());
    }
    const dataError = classifyDataError(error);
    if (dataError) {
      // An input the edge let through: the client's 422, logged so that the edge can learn it.
      request.log.warn({ err: error, code: dataError.code }, 'the database refused a value of the request; answered 422');
      return errorReply(ctx.urls, reply, validationFailed([{ resource: 'Request', field: '', code: 'invalid', message: dataError.message }], dataError.message));
    }
    const status = fastifyError.statusCode ?? 500;
    if (status >= 400 && status < 500) return errorReply(ctx.urls, reply, new ApiError(status, fastifyError.message));
    request.log.error({ err: error }, 'request failed');
    return errorReply(ctx.urls, reply, new ApiError(500, 'Internal Server Error'));
  });
}

async function checkAdmin(ctx: Context, request: FastifyRequest): Promise<void> {
  const given = bearerCredential(request.headers.authorization);
  if (given === null) throw new ApiError(401, 'Requires authentication');
  // A wrong admin token is a failed login of the client's address, limited like the public API's.
  await ctx.rateLimiter.guardLogin(clientAddress(request), ctx.config.rateLimit.failedLoginsPerHour, async () => {
    // The rule of src/admin/token.ts: CODEHOST_ADMIN_TOKEN, while set, is the token; otherwise the
    // stored one (read each time: a reset counts at once).
    const expected = ctx.config.adminToken
      ? hashSecret(ctx.config.adminToken)
      : await findSetting(ctx.db.kysely, ADMIN_TOKEN_HASH);
    if (!expected || !secretMatches(given, expected)) throw new ApiError(401, 'Bad credentials');
  }, (error) => error instanceof ApiError && error.status === 401);
}
