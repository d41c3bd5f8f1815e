// How the platform reads a request: every body as JSON (bounded), boolean query values as it spells
// them, no NUL anywhere, and a body over the limit answered 413 without a reset.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { bodyBoundsError } from '../platform/bounds.ts';
import { ApiError, validationFailed } from '../platform/errors.ts';
import { isStorableText } from '../platform/schemas.ts';


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
export function discardRestOfBody(request: FastifyRequest, reply: FastifyReply): void {
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
 * The platform reads every body as JSON, whatever its content type. A route with a body schema and
 * no body is validated as `{}`, so missing fields are 422s. Boolean query parameters are read as the
 * platform reads them (`?all=True`, `?all=1`): Ajv's coercion knows only `true` and `false`.
 */
export function installInput(app: FastifyInstance): void {
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
}
