// How each kind of setting is read from the environment and checked: integers, booleans, URLs,
// hosts, origins, proxies and networks; a value that cannot work is a ConfigError naming it.
import { BlockList, isIP } from 'node:net';
import { ConfigError, type Config, type Env } from './types.ts';

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

export function int(env: Env, name: string, fallback: number, min = 0, max = Number.MAX_SAFE_INTEGER): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new ConfigError(`${name} must be an integer${max < Number.MAX_SAFE_INTEGER ? ` from ${min} to ${max}` : ` >= ${min}`}, got "${raw}"`);
  }
  return value;
}

export function bool(env: Env, name: string, fallback: boolean): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (['1', 'true', 'yes', 'on'].includes(raw.toLowerCase())) return true;
  if (['0', 'false', 'no', 'off'].includes(raw.toLowerCase())) return false;
  throw new ConfigError(`${name} must be a boolean (1/0, true/false), got "${raw}"`);
}

export function databasePooler(env: Env): 'session' | 'transaction' {
  const value = str(env, 'CODEHOST_DATABASE_POOLER', 'session');
  if (value !== 'session' && value !== 'transaction') throw new ConfigError(`CODEHOST_DATABASE_POOLER must be "session" or "transaction", got "${value}"`);
  return value;
}

export function str(env: Env, name: string, fallback: string): string {
  const raw = env[name];
  return raw === undefined || raw === '' ? fallback : raw;
}

/** An absolute http(s) URL without a trailing slash. */
export function httpUrl(name: string, value: string): string {
  let url: URL | null = null;
  try {
    url = new URL(value);
  } catch {
    // reported below
  }
  if (!url || !['http:', 'https:'].includes(url.protocol)) {
    throw new ConfigError(`${name} must be an absolute http:// or https:// URL, got "${value}"`);
  }
  return value.replace(/\/+$/, '');
}

const HOST_NAME = /^(?=.{1,253}$)[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/i;

export function host(env: Env): string {
  const value = str(env, 'CODEHOST_HOST', '127.0.0.1');
  if (!isIP(value) && !HOST_NAME.test(value)) {
    throw new ConfigError(`CODEHOST_HOST must be an IP address or a host name of this machine (127.0.0.1, 0.0.0.0, ::, localhost), got "${value}"`);
  }
  return value;
}

/** Whether the server listens on a loopback address only: `localhost`, 127.0.0.0/8 or ::1. */
export function isLoopbackHost(value: string): boolean {
  const lower = value.toLowerCase();
  return lower === 'localhost' || (isIP(lower) === 4 && lower.startsWith('127.')) || (isIP(lower) === 6 && /^(0{0,4}:){2,7}0{0,3}1$/.test(lower));
}

export const MODES = ['laptop', 'production'] as const;

export function mode(env: Env, reachedBy: string | null): Config['mode'] {
  const value = str(env, 'CODEHOST_MODE', reachedBy ? 'production' : 'laptop');
  if (!(MODES as readonly string[]).includes(value)) {
    throw new ConfigError(`CODEHOST_MODE must be laptop or production, got "${value}"`);
  }
  return value as Config['mode'];
}

/** A PostgreSQL URL, checked for its form only (the connection is tried at start). Never echoes a password. */
export function databaseUrl(env: Env): string | null {
  const value = env.DATABASE_URL;
  if (!value) return null;
  let url: URL | null = null;
  try {
    url = new URL(value);
  } catch {
    // reported below
  }
  if (!url || !['postgres:', 'postgresql:'].includes(url.protocol) || (!url.hostname && !url.searchParams.has('host'))) {
    const shown = url ? ` (got ${url.protocol}//${url.host}${url.pathname})` : '';
    throw new ConfigError(
      `DATABASE_URL must be a PostgreSQL URL like postgres://user:password@host:5432/database${shown}; unset it to use the embedded SQLite database`,
    );
  }
  return value;
}

export function logLevel(env: Env): string {
  const value = str(env, 'CODEHOST_LOG_LEVEL', 'info');
  if (!(LOG_LEVELS as readonly string[]).includes(value)) {
    throw new ConfigError(`CODEHOST_LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}, got "${value}"`);
  }
  return value;
}

/** A token callers send as `Authorization: Bearer <token>`, or null when unset. */
export function bearerToken(env: Env, name: 'CODEHOST_ADMIN_TOKEN' | 'CODEHOST_METRICS_TOKEN'): string | null {
  const value = env[name] || null;
  if (value && /\s/.test(value)) throw new ConfigError(`${name} must not contain spaces (it is sent as "Authorization: Bearer <token>")`);
  return value;
}

/**
 * The address a client on this machine reaches a server listening on `host`:`port` at, the one the
 * start banner prints: a wildcard address (`0.0.0.0`, `::`) is reached through loopback.
 */
export function listeningAddress(host: string, port: number): string {
  const reachable = host === '0.0.0.0' ? '127.0.0.1' : host === '::' ? '::1' : host;
  return `http://${reachable.includes(':') ? `[${reachable}]` : reachable}:${port}`;
}

/** The API and web bases once the server listens at `address`: the settings, or that address. */
export function publicUrls(config: Config, address: string): { api: string; web: string } {
  const web = config.urlsFollowAddress.web ? address : config.webUrl;
  return { web, api: config.urlsFollowAddress.api ? `${web}/api/v3` : config.apiUrl };
}

/** `*`, or a comma-separated list of origins (`scheme://host[:port]`, nothing after). */
export function corsOrigins(env: Env): '*' | string[] {
  const raw = str(env, 'CODEHOST_CORS_ORIGINS', '*').trim();
  if (raw === '*') return '*';
  const origins = raw.split(',').map((origin) => origin.trim()).filter(Boolean);
  for (const origin of origins) {
    let url: URL | null = null;
    try {
      url = new URL(origin);
    } catch {
      // reported below
    }
    if (!url || !['http:', 'https:'].includes(url.protocol) || url.origin !== origin.replace(/\/$/, '').toLowerCase()) {
      throw new ConfigError(`CODEHOST_CORS_ORIGINS must be * or comma-separated origins like https://app.example.com,http://127.0.0.1:8080 (no path), got "${origin}"`);
    }
  }
  if (!origins.length) throw new ConfigError('CODEHOST_CORS_ORIGINS must be * or at least one origin');
  return origins.map((origin) => new URL(origin).origin);
}

/** proxy-addr's names for the reserved ranges, accepted beside addresses and CIDRs. */
const PROXY_RANGE_NAMES = ['loopback', 'linklocal', 'uniquelocal'];

function isProxyAddress(value: string): boolean {
  if (PROXY_RANGE_NAMES.includes(value)) return true;
  const [address, prefix, ...rest] = value.split('/');
  const family = isIP(address!);
  if (!family || rest.length) return false;
  if (prefix === undefined) return true;
  // A prefix length, or (IPv4) a netmask.
  if (/^\d{1,3}$/.test(prefix)) return Number(prefix) <= (family === 4 ? 32 : 128);
  return family === 4 && isIP(prefix) === 4;
}

export function trustProxy(env: Env): false | number | string[] {
  const raw = str(env, 'CODEHOST_TRUST_PROXY', '').trim();
  if (raw === '' || raw === '0') return false;
  if (/^\d+$/.test(raw)) return int(env, 'CODEHOST_TRUST_PROXY', 0, 0, 100);
  const addresses = raw.split(',').map((part) => part.trim());
  const wrong = addresses.find((address) => !isProxyAddress(address));
  if (wrong !== undefined) {
    throw new ConfigError(
      `CODEHOST_TRUST_PROXY must be a hop count (1 for one proxy in front) or a comma-separated list of proxy addresses or CIDR ranges (10.0.0.1, 10.0.0.0/8, loopback), got "${wrong}"`,
    );
  }
  return addresses;
}

/**
 * The loopback and private networks: the webhook address guard's `loopback` and `private` classes
 * (src/areas/app-webhooks/sender.ts), and where CODEHOST_WEBHOOK_ALLOW_NETWORKS may open. Private:
 * RFC 1918, carrier-grade NAT, benchmarking; IPv6 unique-local and the deprecated site-local.
 */
export const LOOPBACK_NETWORKS: readonly (readonly [string, number])[] = [['127.0.0.0', 8], ['::1', 128]];
export const PRIVATE_NETWORKS: readonly (readonly [string, number])[] = [
  ['10.0.0.0', 8], ['172.16.0.0', 12], ['192.168.0.0', 16], ['100.64.0.0', 10], ['198.18.0.0', 15], ['fc00::', 7], ['fec0::', 10],
];

/**
 * CODEHOST_WEBHOOK_ALLOW_NETWORKS: comma-separated CIDRs (or addresses), each inside one loopback or
 * private network, so that no list opens more than those (link-local and metadata addresses stay
 * refused whatever it says). An address is written in its plain form: the guard reads every
 * spelling of the addresses it checks, the settings take one.
 */
export function allowNetworks(env: Env): string[] {
  const raw = env.CODEHOST_WEBHOOK_ALLOW_NETWORKS;
  if (!raw) return [];
  const entries = raw.split(',').map((part) => part.trim()).filter(Boolean);
  const name = 'CODEHOST_WEBHOOK_ALLOW_NETWORKS';
  if (!entries.length) throw new ConfigError(`${name} must list at least one network (10.20.0.0/16, fd12:3456::/32); unset it to allow none`);
  return entries.map((entry) => {
    const [address = '', prefixText, ...rest] = entry.split('/');
    const family = isIP(address);
    const prefix = prefixText === undefined ? (family === 6 ? 128 : 32) : /^\d{1,3}$/.test(prefixText) ? Number(prefixText) : NaN;
    if (!family || rest.length || !(prefix <= (family === 4 ? 32 : 128))) {
      throw new ConfigError(`${name} must be comma-separated networks like 10.20.0.0/16 or fd12:3456::/32 (an IPv4 or IPv6 address, a prefix length), got "${entry}"`);
    }
    const kind = family === 4 ? 'ipv4' : 'ipv6';
    // Inside a range: as long a prefix, and its address in it (ranges are aligned, so all of it is).
    const inside = [...LOOPBACK_NETWORKS, ...PRIVATE_NETWORKS].some(([base, length]) => {
      if (isIP(base) !== family || prefix < length) return false;
      const range = new BlockList();
      range.addSubnet(base, length, kind);
      return range.check(address, kind);
    });
    if (!inside) {
      throw new ConfigError(
        `${name}: "${entry}" is not inside a private or loopback range (10.0.0.0/8, 172.16.0.0/12, 192.168.0.0/16, 100.64.0.0/10, 198.18.0.0/15, 127.0.0.0/8, fc00::/7, fec0::/10, ::1/128); ` +
          'name your receivers\' networks (public addresses need no allowing; link-local and metadata addresses are never allowed)',
      );
    }
    return `${address.toLowerCase()}/${prefix}`;
  });
}

export function timeouts(env: Env): Config['timeouts'] {
  const headersMs = int(env, 'CODEHOST_HEADERS_TIMEOUT_MS', 10_000, 1);
  const requestMs = int(env, 'CODEHOST_REQUEST_TIMEOUT_MS', 60_000, 1);
  const keepAliveMs = int(env, 'CODEHOST_KEEP_ALIVE_TIMEOUT_MS', 72_000, 1);
  if (headersMs > requestMs) {
    throw new ConfigError(`CODEHOST_HEADERS_TIMEOUT_MS (${headersMs}) must not exceed CODEHOST_REQUEST_TIMEOUT_MS (${requestMs}): the headers are part of the request`);
  }
  return { headersMs, requestMs, keepAliveMs };
}

/** Whether a URL's host is a loopback address (`localhost`, 127.0.0.0/8, ::1). */
export function isLoopbackUrl(url: string): boolean {
  return isLoopbackHost(new URL(url).hostname.replace(/^\[|\]$/g, ''));
}
