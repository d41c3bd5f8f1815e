// Token format: `<prefix>_<30 random base62 chars><6 base62 chars of CRC-32>`. 30 base62 characters
// carry 178 bits from the CSPRNG; the checksum lets a secret scanner recognise a token offline.
// Only the SHA-256 hash (base64) and the last eight characters are ever stored.
import { hash, randomBytes, randomInt, timingSafeEqual } from 'node:crypto';
// CRC-32 (the zlib polynomial) of the token's body, natively: every authenticated request checks one.
import { crc32 } from 'node:zlib';

export type TokenKind = 'classic' | 'fine_grained' | 'oauth' | 'app_user' | 'installation';

export const TOKEN_PREFIXES: Record<TokenKind, string> = {
  classic: 'chp',
  fine_grained: 'chpat',
  oauth: 'cho',
  app_user: 'chu',
  installation: 'chs',
};

const KIND_BY_PREFIX = new Map(Object.entries(TOKEN_PREFIXES).map(([kind, prefix]) => [prefix, kind as TokenKind]));
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const RANDOM_LENGTH = 30;
const CHECKSUM_LENGTH = 6;

function base62(value: number, width: number): string {
  let out = '';
  for (let i = 0; i < width; i++) {
    out = BASE62[value % 62] + out;
    value = Math.floor(value / 62);
  }
  return out;
}

export function randomBase62(length: number): string {
  let out = '';
  for (let i = 0; i < length; i++) out += BASE62[randomInt(62)];
  return out;
}

/** A token of `kind` around a 30-character base62 body (fixed bodies make reproducible example tokens). */
export function formatToken(kind: TokenKind, body: string): string {
  if (!/^[0-9A-Za-z]{30}$/.test(body)) throw new Error('a token body is 30 base62 characters');
  return `${TOKEN_PREFIXES[kind]}_${body}${base62(crc32(body), CHECKSUM_LENGTH)}`;
}

export function generateToken(kind: TokenKind): string {
  return formatToken(kind, randomBase62(RANDOM_LENGTH));
}

/** The kind a well-formed token (prefix and checksum both right) belongs to, else null. */
export function tokenKindOf(token: string): TokenKind | null {
  const match = /^([a-z]+)_([0-9A-Za-z]{36})$/.exec(token);
  if (!match) return null;
  const kind = KIND_BY_PREFIX.get(match[1]!);
  if (!kind) return null;
  const body = match[2]!.slice(0, RANDOM_LENGTH);
  return match[2]!.slice(RANDOM_LENGTH) === base62(crc32(body), CHECKSUM_LENGTH) ? kind : null;
}

/** base64 SHA-256: the stored form of every token and secret, and the API's `hashed_token`. */
export function hashSecret(value: string): string {
  return hash('sha256', value, 'base64');
}

/** The token of an `Authorization: Bearer <token>` header, or null when the header is not one. */
export function bearerCredential(authorization: string | undefined): string | null {
  return /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '')?.[1] ?? null;
}

/** Whether `given` is the secret whose `hashSecret` is `expectedHash`, compared in constant time. */
export function secretMatches(given: string, expectedHash: string): boolean {
  return secretsEqual(hashSecret(given), expectedHash);
}

export function secretsEqual(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}

export function randomHex(bytes: number): string {
  return randomBytes(bytes).toString('hex');
}
