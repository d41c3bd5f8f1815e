// The version check of every public request (`X-Vendor-Api-Version`, src/platform/vendor.ts), and the rate-limit headers of
// an answer given before the caller is known.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Context } from '../platform/context.ts';
import { ApiError } from '../platform/errors.ts';
import { clientAddress, rateLimitHeaders, type RateLimitKey } from '../platform/rate-limit.ts';
import { requestedApiVersion, type VendorNames } from '../platform/vendor.ts';

export const API_VERSIONS = ['2022-11-28', '2026-03-10'] as const;
export const DEFAULT_API_VERSION = '2022-11-28';


/**
 * The version check of every public route: `X-Vendor-Api-Version` (or the vendor word's header;
 * default 2022-11-28), 400 for others. Every answer says which version it is: the 400 and answers
 * that never reach a route name the default.
 */
export function selectApiVersion(names: VendorNames, request: FastifyRequest, reply: FastifyReply): void {
  const requested = requestedApiVersion(names, request.headers);
  const version = typeof requested === 'string' ? requested : DEFAULT_API_VERSION;
  const known = (API_VERSIONS as readonly string[]).includes(version);
  reply.header(names.apiVersionSelected, known ? version : DEFAULT_API_VERSION);
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
