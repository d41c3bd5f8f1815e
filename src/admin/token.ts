// The admin API's bearer token. The rule: while CODEHOST_ADMIN_TOKEN is set, it is the token (it is
// never stored, and the stored one is left as it is); when it is unset, the stored token is in force.
// Only the stored token's SHA-256 is kept, so a token is generated only when it is about to be shown:
// by the first start that actually listens with none stored, or by `codehost admin-token reset`.
// A start that fails before listening therefore loses nothing.
import type { FastifyRequest } from 'fastify';
import type { Config } from '../config.ts';
import type { Db } from '../db/index.ts';
import type { Context } from '../platform/context.ts';
import { ApiError } from '../platform/errors.ts';
import { clientAddress } from '../platform/rate-limit.ts';
import { ADMIN_TOKEN_HASH as KEY, ensureSetting, findSetting, putSetting } from '../platform/settings-store.ts';
import { bearerCredential, hashSecret, randomBase62, secretMatches } from '../platform/tokens.ts';

/** Which admin token a server uses, and the token itself when this start generated it (shown once). */
export type AdminTokenInForce = { source: 'environment' } | { source: 'stored' } | { source: 'generated'; token: string };

/** A new admin token: `chadm_` and 40 base62 characters (238 random bits). */
export const newAdminToken = (): string => `chadm_${randomBase62(40)}`;

/** The token in force for a server that now listens; generates and stores one if there is none. */
export async function adminTokenInForce(db: Db, config: Config): Promise<AdminTokenInForce> {
  if (config.adminToken) return { source: 'environment' };
  const token = newAdminToken();
  const hash = hashSecret(token);
  // Another process may have stored one first: the stored value is the one that counts.
  const stored = await ensureSetting(db.kysely, KEY, hash);
  return stored === hash ? { source: 'generated', token } : { source: 'stored' };
}

/** Replaces the stored token with a new one and returns it; the previous one stops working at once. */
export async function resetAdminToken(db: Db): Promise<string> {
  const token = newAdminToken();
  const hash = hashSecret(token);
  await putSetting(db.kysely, KEY, hash);
  return token;
}

/**
 * The operator scope's check: the admin token as a bearer credential. A wrong one is a failed login
 * of the client's address, limited like the public API's. The rule above: CODEHOST_ADMIN_TOKEN,
 * while set, is the token; otherwise the stored one (read each time: a reset counts at once).
 */
export async function checkAdminToken(ctx: Context, request: FastifyRequest): Promise<void> {
  const given = bearerCredential(request.headers.authorization);
  if (given === null) throw new ApiError(401, 'Requires authentication');
  await ctx.rateLimiter.guardLogin(clientAddress(request), ctx.config.rateLimit.failedLoginsPerHour, async () => {
    const expected = ctx.config.adminToken ? hashSecret(ctx.config.adminToken) : await findSetting(ctx.db.kysely, KEY);
    if (!expected || !secretMatches(given, expected)) throw new ApiError(401, 'Bad credentials');
  }, (error) => error instanceof ApiError && error.status === 401);
}
