// Conditional requests: the ETag of a GET's answer and the 304 when the client's copy is current.
import { hash } from 'node:crypto';
import type { FastifyReply, FastifyRequest, onSendHookHandler } from 'fastify';
import type { Context } from '../platform/context.ts';


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

/**
 * The onSend hook of a GET's 200: a route that knows what its body is made of gives its own tag (one
 * that changes whenever the body would), and may answer bytes; otherwise the tag is the hash of a
 * text body. A current copy gets the 304.
 */
export function conditionalAnswer(ctx: Context): onSendHookHandler {
  return (request, reply, payload, done) => {
    if ((request.method !== 'GET' && request.method !== 'HEAD') || reply.statusCode !== 200) return done(null, payload);
    const given = reply.getHeader('etag');
    if (typeof payload !== 'string' && !(typeof given === 'string' && Buffer.isBuffer(payload))) return done(null, payload);
    const etag = typeof given === 'string' ? given : `W/"${hash('sha1', payload as string, 'hex')}"`;
    reply.header('etag', etag);
    if (!unchanged(request, reply)) return done(null, payload);
    answerNotModified(ctx, request, reply);
    done(null, request.method === 'HEAD' ? payload : null); // no content (Fastify sets no Content-Length; '' would be `0`); a HEAD's goes to Fastify's HEAD step, which sends none (null there is a 500)
  };
}
