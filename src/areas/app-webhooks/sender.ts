// One HTTP POST of a webhook delivery, and the address guard in front of it. Redirects are not
// followed (node:http never does), the whole exchange has one deadline, TLS is verified unless the
// hook says otherwise, and the connection only ever goes to an address that passed the guard: IP
// literals are checked here, host names in the socket's own `lookup`, so what was checked is what
// is connected to (no second resolution an attacker's DNS could answer differently), and the socket's
// remote address once more when it connects. Every spelling of an address is read the same way
// (canonicalAddress, and IPv6 forms that embed an IPv4 address are classed by it).
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import { BlockList, isIP, type LookupFunction } from 'node:net';
import { LOOPBACK_NETWORKS, PRIVATE_NETWORKS } from '../../config.ts';

export type AddressClass = 'public' | 'private' | 'loopback' | 'link-local' | 'metadata' | 'reserved';

function list(subnets: readonly (readonly [string, number])[]): BlockList {
  const blocks = new BlockList();
  for (const [address, prefix] of subnets) blocks.addSubnet(address, prefix, isIP(address) === 4 ? 'ipv4' : 'ipv6');
  return blocks;
}

// Checked in this order: the first match names the class. IPv6 forms that carry an IPv4 address
// (mapped, compatible, translated, NAT64, 6to4) are classed by that address, below.
const CLASSES: [AddressClass, BlockList][] = [
  // Cloud metadata services outside link-local: Alibaba, AWS's IPv6 endpoint.
  ['metadata', list([['100.100.100.200', 32], ['fd00:ec2::254', 128]])],
  // Includes 169.254.169.254, the metadata address of most clouds.
  ['link-local', list([['169.254.0.0', 16], ['fe80::', 10]])],
  // "This network" (0.0.0.0 reaches the local host), multicast, reserved and broadcast, the IETF and
  // documentation blocks; IPv6 unspecified, discard, documentation, multicast, and Teredo (whose
  // embedded address is obfuscated: refused whole).
  ['reserved', list([
    ['0.0.0.0', 8], ['192.0.0.0', 24], ['192.0.2.0', 24], ['198.51.100.0', 24], ['203.0.113.0', 24], ['224.0.0.0', 4], ['240.0.0.0', 4],
    ['::', 128], ['100::', 64], ['2001::', 32], ['2001:db8::', 32], ['ff00::', 8],
  ])],
  ['loopback', list(LOOPBACK_NETWORKS)],
  // RFC 1918, carrier-grade NAT, benchmarking; IPv6 unique-local and the deprecated site-local.
  ['private', list(PRIVATE_NETWORKS)],
];

/**
 * An IP address in its one canonical spelling, or null when `text` is not an IP address. The URL
 * parser's host rules read every form a URL may use: IPv4 in decimal (`2130706433`), hex
 * (`0x7f000001`), octal (`0177.0.0.1`) and short (`127.1`) forms, IPv6 in any compression, brackets;
 * a zone id (`fe80::1%eth0`, as a socket may report it) is dropped.
 */
export function canonicalAddress(text: string): string | null {
  const bare = text.trim().replace(/^\[(.*)\]$/, '$1').replace(/%[^%]*$/, '');
  if (bare === '' || /[/?#@\\\s]/.test(bare)) return null;
  let host: string;
  try {
    host = new URL(`http://${bare.includes(':') ? `[${bare}]` : bare}/`).hostname;
  } catch {
    return null;
  }
  host = host.replace(/^\[|\]$/g, '');
  return isIP(host) ? host : null;
}

/** The eight 16-bit groups of a canonical IPv6 address. */
function ipv6Groups(address: string): number[] {
  const [head, tail] = address.includes('::') ? address.split('::') as [string, string] : [address, null];
  const parse = (part: string) => (part === '' ? [] : part.split(':').flatMap((group) => {
    if (!group.includes('.')) return [parseInt(group, 16)];
    const [a, b, c, d] = group.split('.').map(Number) as [number, number, number, number];
    return [(a << 8) | b, (c << 8) | d];
  }));
  const front = parse(head);
  if (tail === null) return front;
  const back = parse(tail);
  return [...front, ...new Array<number>(8 - front.length - back.length).fill(0), ...back];
}

const dotted = (high: number, low: number) => `${high >> 8}.${high & 0xff}.${low >> 8}.${low & 0xff}`;

/** The IPv4 address an IPv6 address carries, and whether its form is deprecated (IPv4-compatible). */
function embeddedIpv4(groups: number[]): { address: string; deprecated: boolean } | null {
  const zero = (from: number, to: number) => groups.slice(from, to).every((group) => group === 0);
  const [g0, g1, g2, , , g5, g6, g7] = groups as [number, number, number, number, number, number, number, number];
  // ::ffff:a.b.c.d (mapped), ::ffff:0:a.b.c.d (translated)
  if (zero(0, 5) && g5 === 0xffff) return { address: dotted(g6, g7), deprecated: false };
  if (zero(0, 4) && groups[4] === 0xffff && g5 === 0) return { address: dotted(g6, g7), deprecated: false };
  // ::a.b.c.d (IPv4-compatible, deprecated); :: and ::1 are themselves.
  if (zero(0, 6) && !(g6 === 0 && g7 <= 1)) return { address: dotted(g6, g7), deprecated: true };
  // 64:ff9b::a.b.c.d (NAT64) and the local-use 64:ff9b:1::/48
  if (g0 === 0x64 && g1 === 0xff9b && (zero(2, 6) || g2 === 1)) return { address: dotted(g6, g7), deprecated: false };
  // 2002:a.b.c.d::/48 (6to4)
  if (g0 === 0x2002) return { address: dotted(g1, g2), deprecated: false };
  return null;
}

function listedClass(address: string): AddressClass {
  const family = isIP(address) === 6 ? 'ipv6' : 'ipv4';
  return CLASSES.find(([, blocks]) => blocks.check(address, family))?.[0] ?? 'public';
}

/** The class of an address in any spelling; what is not an IP address is `reserved` (refused). */
export function addressClass(text: string): AddressClass {
  const address = canonicalAddress(text);
  if (address === null) return 'reserved';
  if (isIP(address) === 4) return listedClass(address);
  const embedded = embeddedIpv4(ipv6Groups(address));
  if (!embedded) return listedClass(address);
  const kind = listedClass(embedded.address);
  // A public address in a deprecated form reaches nothing a receiver would use.
  return kind === 'public' && embedded.deprecated ? 'reserved' : kind;
}

/** Which addresses beside public ones deliveries may reach (the `webhooks` settings). */
export interface AddressPolicy {
  /** Every private and loopback address (CODEHOST_WEBHOOK_ALLOW_PRIVATE). */
  allowPrivateAddresses: boolean;
  /** The private and loopback addresses in these networks, `address/prefix` (CODEHOST_WEBHOOK_ALLOW_NETWORKS). */
  allowNetworks: readonly string[];
}

/**
 * Whether an address (any spelling) is in one of the networks. An IPv4-mapped IPv6 address
 * (`::ffff:a.b.c.d`, how a dual-stack socket names an IPv4 peer) is that IPv4 address; the other
 * forms that embed one (compatible, NAT64, 6to4) are other addresses, in IPv6 networks only.
 */
function inNetworks(text: string, networks: readonly string[]): boolean {
  const address = canonicalAddress(text);
  if (address === null || networks.length === 0) return false;
  const v4: [string, number][] = [];
  const v6: [string, number][] = [];
  for (const network of networks) {
    const [base, prefix] = network.split('/') as [string, string];
    (isIP(base) === 4 ? v4 : v6).push([base, Number(prefix)]);
  }
  // Two lists, so that BlockList's own reading of mapped addresses against IPv4 rules plays no part.
  if (isIP(address) === 4) return list(v4).check(address, 'ipv4');
  if (list(v6).check(address, 'ipv6')) return true;
  const groups = ipv6Groups(address);
  const mapped = groups.slice(0, 5).every((group) => group === 0) && groups[5] === 0xffff;
  return mapped && list(v4).check(dotted(groups[6]!, groups[7]!), 'ipv4');
}

/** Why an address may not be delivered to, or null when it may. */
export function blockedReason(address: string, policy: AddressPolicy): AddressClass | null {
  const kind = addressClass(address);
  if (kind === 'public') return null;
  if (kind !== 'private' && kind !== 'loopback') return kind;
  return policy.allowPrivateAddresses || inNetworks(address, policy.allowNetworks) ? null : kind;
}

class BlockedAddressError extends Error {
  readonly addressClass: AddressClass;
  /** `connected`: the socket reached an address the checks before connecting should have refused; closed before sending. */
  constructor(addressClass: AddressClass, stage: 'before' | 'connected' = 'before') {
    super(stage === 'before' ? `refused to connect to a ${addressClass} address` : `closed the connection to a ${addressClass} address before sending`);
    this.addressClass = addressClass;
  }
}

class DeadlineError extends Error {}

/** Resolves every address of the host and refuses the connection if any of them is blocked. */
function guardedLookup(policy: AddressPolicy): LookupFunction {
  return (hostname, options, callback) => {
    dnsLookup(hostname, { family: options.family, hints: options.hints, all: true }, (error, addresses: LookupAddress[]) => {
      if (error) return callback(error, '', 0);
      if (addresses.length === 0) return callback(Object.assign(new Error(`no address for ${hostname}`), { code: 'ENOTFOUND' }), '', 0);
      for (const { address } of addresses) {
        const reason = blockedReason(address, policy);
        if (reason) return callback(new BlockedAddressError(reason), '', 0);
      }
      if (options.all) (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, addresses);
      else callback(null, addresses[0]!.address, addresses[0]!.family);
    });
  };
}

// Keep-alive agents: a busy receiver is not paid a TCP (and TLS) handshake per delivery.
const agents = { http: new http.Agent({ keepAlive: true }), https: new https.Agent({ keepAlive: true }) };

export interface WebhookRequest {
  url: string;
  headers: Record<string, string>;
  body: Buffer;
  /** `insecure_ssl` "1": the receiver's certificate is not verified. */
  insecureSsl: boolean;
}

export interface SenderSettings extends AddressPolicy {
  timeoutMs: number;
  /** Bytes of the response body kept; the rest is not read. */
  responseBodyLimit: number;
}

export interface WebhookResult {
  /** `OK`, `Invalid HTTP Response: <code>`, or what went wrong in transport. */
  status: string;
  /** The HTTP status, or 0 when no response came. */
  statusCode: number;
  durationSeconds: number;
  responseHeaders: Record<string, string> | null;
  responseBody: string | null;
}

const TLS_CODES = /CERT|SELF_SIGNED|UNABLE_TO_VERIFY|ERR_TLS|ERR_SSL|HOSTNAME/;

/** A transport failure in words: the delivery's `status` when no HTTP response came. */
function transportStatus(error: unknown): string {
  if (error instanceof BlockedAddressError) return `blocked: ${error.message}`;
  if (error instanceof DeadlineError) return 'timed out';
  const code = (error as { code?: string }).code ?? '';
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN' || code === 'EAI_NONAME') return 'failed to resolve host';
  if (TLS_CODES.test(code)) return `TLS certificate not accepted (${code})`;
  if (code === 'ECONNRESET' || code === 'EPIPE') return 'connection reset by host';
  return 'failed to connect to host';
}

function headerMap(headers: http.IncomingHttpHeaders): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined) out[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return out;
}

/** Posts one delivery. Never throws: every outcome is a result to record. */
export function postWebhook(request: WebhookRequest, settings: SenderSettings): Promise<WebhookResult> {
  const started = performance.now();
  const seconds = () => Number(((performance.now() - started) / 1000).toFixed(3));
  const target = new URL(request.url);
  const host = target.hostname.replace(/^\[|\]$/g, '');
  if (isIP(host)) {
    const reason = blockedReason(host, settings);
    if (reason) return Promise.resolve({ status: transportStatus(new BlockedAddressError(reason)), statusCode: 0, durationSeconds: seconds(), responseHeaders: null, responseBody: null });
  }
  const secure = target.protocol === 'https:';
  return new Promise((resolve) => {
    let settled = false;
    let response: http.IncomingMessage | null = null;
    const chunks: Buffer[] = [];
    let kept = 0;

    const settle = (result: WebhookResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(deadline);
      resolve(result);
    };
    const answered = () => {
      const code = response!.statusCode ?? 0;
      settle({
        status: code >= 200 && code < 300 ? 'OK' : `Invalid HTTP Response: ${code}`,
        statusCode: code,
        durationSeconds: seconds(),
        responseHeaders: headerMap(response!.headers),
        // Text as UTF-8; NUL, which PostgreSQL text cannot hold, becomes U+FFFD like any undecodable byte.
        responseBody: Buffer.concat(chunks).toString('utf8').replaceAll('\0', '\uFFFD'),
      });
    };
    const failed = (error: unknown) => {
      // Once the status line and headers came, the delivery was answered; a body cut short stays short.
      if (response) answered();
      else settle({ status: transportStatus(error), statusCode: 0, durationSeconds: seconds(), responseHeaders: null, responseBody: null });
    };

    const outgoing = (secure ? https : http).request(target, {
      method: 'POST',
      headers: { ...request.headers, 'content-length': String(request.body.length) },
      agent: secure ? agents.https : agents.http,
      lookup: guardedLookup(settings),
      ...(secure ? { rejectUnauthorized: !request.insecureSsl } : {}),
    }, (incoming) => {
      response = incoming;
      incoming.on('data', (chunk: Buffer) => {
        const room = settings.responseBodyLimit - kept;
        if (room > 0) {
          chunks.push(room >= chunk.length ? chunk : chunk.subarray(0, room));
          kept += Math.min(room, chunk.length);
        }
        if (kept >= settings.responseBodyLimit) {
          // Enough kept: stop reading rather than download the rest.
          answered();
          incoming.destroy();
        }
      });
      incoming.on('end', answered);
      incoming.on('error', failed);
      incoming.on('aborted', () => failed(new Error('aborted')));
    });
    // The address connected to is checked once more, before the request is written (the request's
    // data waits for 'connect' and is queued after this listener): whatever resolved or spelled the
    // address, nothing is sent to one the guard refuses. A kept-alive socket was checked when it connected.
    outgoing.on('socket', (socket) => {
      if (!socket.connecting) return;
      socket.once('connect', () => {
        const reason = blockedReason(socket.remoteAddress ?? '', settings);
        if (reason) socket.destroy(new BlockedAddressError(reason, 'connected'));
      });
    });
    const deadline = setTimeout(() => {
      failed(new DeadlineError());
      outgoing.destroy(new DeadlineError());
    }, settings.timeoutMs);
    outgoing.on('error', failed);
    outgoing.end(request.body);
  });
}
