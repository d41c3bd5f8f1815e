// The request conventions every public route shares: version check, (the caller: core/callers),
// schema validation, ETag / 304. Also the platform's error bodies, the
// JSON body parser, the 404 for unknown routes and the common response headers.
import { createHash } from 'node:crypto';
import Ajv from 'ajv';
import addFormats from 'ajv-formats';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { databaseUnavailable } from '../db/errors.ts';
import type { Context } from './context.ts';
import { ApiError, serviceUnavailable, validationFailed, type ValidationError } from './errors.ts';
import { findSetting } from './settings-store.ts';
import { hashSecret, secretsEqual } from './tokens.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** An operator route: the admin token is required. */
    admin?: boolean;
  }
  interface FastifyRequest {
    /** The rate-limit key the request was counted under (a 304 refunds it). */
    rateLimitKey: string | null;
  }
}

/** The version check of every public route: `X-Vendor-Api-Version` (default 2022-11-28), 400 for others. */
export function selectApiVersion(request: FastifyRequest, reply: FastifyReply): void {
  const requested = request.headers['x-vendor-api-version'];
  const version = typeof requested === 'string' ? requested : DEFAULT_API_VERSION;
  if (!(API_VERSIONS as readonly string[]).includes(version)) {
    throw new ApiError(400, `No handler found for API version '${version}'. Supported versions: ${API_VERSIONS.join(', ')}.`);
  }
  reply.header('x-vendor-api-version-selected', version);
}

export const API_VERSIONS = ['2022-11-28', '2026-03-10'] as const;
export const DEFAULT_API_VERSION = '2022-11-28';

/** Query strings are coerced (`per_page=5` is a number); bodies are not (`"5"` is not an integer). */
function validatorCompilers() {
  const common = { allErrors: false, strict: false, useDefaults: true, removeAdditional: false } as const;
  const query = new Ajv.default({ ...common, coerceTypes: 'array' });
  const body = new Ajv.default({ ...common, coerceTypes: false });
  addFormats.default(query);
  addFormats.default(body);
  return ({ schema, httpPart }: { schema: object; httpPart?: string }) =>
    (httpPart === 'body' ? body : query).compile(schema);
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

function errorReply(reply: FastifyReply, error: ApiError): FastifyReply {
  if (error.headers) reply.headers(error.headers);
  return reply.code(error.status).type('application/json; charset=utf-8').send(error.body());
}

export function installConventions(app: FastifyInstance, ctx: Context): void {
  app.setValidatorCompiler(validatorCompilers());
  app.decorateRequest('rateLimitKey', null);

  // The platform reads every body as JSON, whatever its content type.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'string' }, (_request, body, done) => {
    const text = String(body);
    if (text.trim() === '') return done(null, undefined);
    try {
      done(null, JSON.parse(text));
    } catch {
      done(new ApiError(400, 'Problems parsing JSON'), undefined);
    }
  });

  app.addHook('onRequest', async (request, reply) => {
    reply.header('x-vendor-request-id', request.id);
    reply.header('x-vendor-media-type', 'vendor.v3; format=json');
    if (request.routeOptions.config.admin) return checkAdmin(ctx, request);
  });

  // A route with a body schema and no body is validated as `{}`, so missing fields are 422s.
  app.addHook('preValidation', async (request) => {
    if (request.body === undefined && request.routeOptions.schema?.body) request.body = {};
  });

  app.addHook('onSend', async (request, reply, payload) => {
    if (request.method !== 'GET' || reply.statusCode !== 200 || typeof payload !== 'string') return payload;
    const etag = `W/"${createHash('sha1').update(payload).digest('hex')}"`;
    reply.header('etag', etag);
    const ifNoneMatch = request.headers['if-none-match'];
    const lastModified = reply.getHeader('last-modified');
    const ifModifiedSince = request.headers['if-modified-since'];
    const unchanged =
      ifNoneMatch !== undefined
        ? ifNoneMatch.split(',').some((tag) => tag.trim() === etag || tag.trim() === etag.slice(2))
        : ifModifiedSince !== undefined && typeof lastModified === 'string' && Date.parse(lastModified) <= Date.parse(ifModifiedSince);
    if (!unchanged) return payload;
    reply.code(304);
    reply.removeHeader('content-type');
    reply.removeHeader('content-length');
    if (request.rateLimitKey) {
      await ctx.rateLimiter.refund(request.rateLimitKey);
      const remaining = Number(reply.getHeader('x-ratelimit-remaining'));
      const used = Number(reply.getHeader('x-ratelimit-used'));
      if (Number.isFinite(remaining)) reply.header('x-ratelimit-remaining', String(remaining + 1));
      if (Number.isFinite(used)) reply.header('x-ratelimit-used', String(Math.max(0, used - 1)));
    }
    return '';
  });

  app.setNotFoundHandler((_request, reply) => errorReply(reply, new ApiError(404, 'Not Found')));

  app.setErrorHandler((error: FastifyError | ApiError, request, reply) => {
    if (error instanceof ApiError) return errorReply(reply, error);
    const fastifyError = error as FastifyError & { validation?: AjvError[]; validationContext?: string };
    if (fastifyError.validation) {
      const part = fastifyError.validationContext ?? 'body';
      const root = fastifyError.validation.find((e) => e.instancePath === '' && e.keyword === 'type');
      if (part === 'body' && root) return errorReply(reply, new ApiError(400, 'Body should be a JSON object'));
      return errorReply(reply, validationFailed(validationErrors(fastifyError.validation, part)));
    }
    if (fastifyError.code === 'FST_ERR_CTP_BODY_TOO_LARGE') return errorReply(reply, new ApiError(413, 'Payload Too Large'));
    const unavailable = databaseUnavailable(error);
    if (unavailable) {
      request.log.warn({ err: error, reason: unavailable }, 'database unavailable; answered 503');
      return errorReply(reply, serviceUnavailable());
    }
    const status = fastifyError.statusCode ?? 500;
    if (status >= 400 && status < 500) return errorReply(reply, new ApiError(status, fastifyError.message));
    request.log.error({ err: error }, 'request failed');
    return errorReply(reply, new ApiError(500, 'Internal Server Error'));
  });
}

async function checkAdmin(ctx: Context, request: FastifyRequest): Promise<void> {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(request.headers.authorization ?? '');
  if (!match) throw new ApiError(401, 'Requires authentication');
  // CODEHOST_ADMIN_TOKEN, while set, is the token; otherwise the stored one (read each time: a reset counts at once).
  const expected = ctx.config.adminToken
    ? hashSecret(ctx.config.adminToken)
    : await findSetting(ctx.db.kysely, 'admin_token_hash');
  if (!expected || !secretsEqual(expected, hashSecret(match[1]!))) throw new ApiError(401, 'Bad credentials');
}
