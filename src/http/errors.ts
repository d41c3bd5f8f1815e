// The platform's error bodies: a thrown ApiError, a failed schema, a body too large, a database that
// is away or refuses a value, and the 404 of a path no route answers.
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { classifyDataError, databaseUnavailable } from '../db/errors.ts';
import type { Context } from '../platform/context.ts';
import { ApiError, documentationUrl, serviceUnavailable, validationFailed, type ReferencedOperation, type ValidationError } from '../platform/errors.ts';
import { referenceUrl, type Urls } from '../platform/urls.ts';
import { discardRestOfBody } from './input.ts';
import { forgetRouteConfig, routeConfig } from './route-config.ts';
import { anonymousRateLimitHeaders, API_VERSIONS, DEFAULT_API_VERSION } from './version.ts';
import { requestedApiVersion } from '../platform/vendor.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The status of a request that fails its schema, where the platform documents 400 rather than 422. */
    invalidStatus?: 400;
    /** Validation errors are strings, as in the platform's simple validation error body (`errors: ["…"]`). */
    errorStrings?: boolean;
  }
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

/** The error handler of every scope: every failure answers the platform's error body. */
export function errorHandler(ctx: Context) {
  return (error: FastifyError | ApiError, request: FastifyRequest, reply: FastifyReply) => {
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
  };
}

/** An unknown path of the API (and of the meta routes): answered as the API does, version and rate-limit headers included. */
export function apiNotFound(ctx: Context) {
  return async (request: FastifyRequest, reply: FastifyReply) => {
    forgetRouteConfig(request);
    const requested = requestedApiVersion(ctx.vendor, request.headers);
    const known = typeof requested === 'string' && (API_VERSIONS as readonly string[]).includes(requested);
    reply.header(ctx.vendor.apiVersionSelected, known ? requested : DEFAULT_API_VERSION);
    await anonymousRateLimitHeaders(ctx, request, reply);
    return errorReply(ctx.urls, reply, new ApiError(404, 'Not Found'));
  };
}

/** An unknown path under /_admin: the operator surface has no version and no rate limit. */
export function operatorNotFound(ctx: Context) {
  return async (request: FastifyRequest, reply: FastifyReply) => {
    forgetRouteConfig(request);
    return errorReply(ctx.urls, reply, new ApiError(404, 'Not Found'));
  };
}
