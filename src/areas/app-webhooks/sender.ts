// One HTTP POST of a webhook delivery, and the address guard in front of it. Redirects are not
// followed (node:http never does), the whole exchange has one deadline, TLS is verified unless the
// hook says otherwise, and the connection only ever goes to an address that passed the guard: IP
// literals are checked here, host names in the socket's own `lookup`, so what was checked is what
// is connected to (no second resolution an attacker's DNS could answer differently).
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import { BlockList, isIP, type LookupFunction } from 'node:net';

export type AddressClass = 'public' | 'private' | 'loopback' | 'link-local' | 'metadata' | 'reserved';

function list(subnets: [string, number][]): BlockList {
  const blocks = new BlockList();
  for (const [address, prefix] of subnets) {
    if (isIP(address) === 4) {
      blocks.addSubnet(address, prefix, 'ipv4');
      // The same range behind NAT64 (64:ff9b::/96); IPv4-mapped IPv6 BlockList matches by itself.
      blocks.addSubnet(`64:ff9b::${address}`, 96 + prefix, 'ipv6');
    } else {
      blocks.addSubnet(address, prefix, 'ipv6');
    }
  }
  return blocks;
}

// Checked in this order: the first match names the class.
const CLASSES: [AddressClass, BlockList][] = [
  // Cloud metadata services outside link-local: Alibaba, AWS's IPv6 endpoint.
  ['metadata', list([['100.100.100.200', 32], ['fd00:ec2::254', 128]])],
  // Includes 169.254.169.254, the metadata address of most clouds.
  ['link-local', list([['169.254.0.0', 16], ['fe80::', 10]])],
  // "This network" (0.0.0.0 reaches the local host), multicast, reserved and broadcast.
  ['reserved', list([['0.0.0.0', 8], ['224.0.0.0', 4], ['240.0.0.0', 4], ['::', 128], ['ff00::', 8]])],
  ['loopback', list([['127.0.0.0', 8], ['::1', 128]])],
  ['private', list([['10.0.0.0', 8], ['172.16.0.0', 12], ['192.168.0.0', 16], ['100.64.0.0', 10], ['fc00::', 7]])],
];

export function addressClass(address: string): AddressClass {
  const family = isIP(address) === 6 ? 'ipv6' : 'ipv4';
  return CLASSES.find(([, blocks]) => blocks.check(address, family))?.[0] ?? 'public';
}

/** Why an address may not be delivered to, or null when it may. */
export function blockedReason(address: string, allowPrivateAddresses: boolean): AddressClass | null {
  const kind = addressClass(address);
  if (kind === 'public') return null;
  if ((kind === 'private' || kind === 'loopback') && allowPrivateAddresses) return null;
  return kind;
}

class BlockedAddressError extends Error {
  readonly addressClass: AddressClass;
  constructor(addressClass: AddressClass) {
    super(`refused to connect to a ${addressClass} address`);
    this.addressClass = addressClass;
  }
}

class DeadlineError extends Error {}

/** Resolves every address of the host and refuses the connection if any of them is blocked. */
function guardedLookup(allowPrivateAddresses: boolean): LookupFunction {
  return (hostname, options, callback) => {
    dnsLookup(hostname, { family: options.family, hints: options.hints, all: true }, (error, addresses: LookupAddress[]) => {
      if (error) return callback(error, '', 0);
      if (addresses.length === 0) return callback(Object.assign(new Error(`no address for ${hostname}`), { code: 'ENOTFOUND' }), '', 0);
      for (const { address } of addresses) {
        const reason = blockedReason(address, allowPrivateAddresses);
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

export interface SenderSettings {
  timeoutMs: number;
  allowPrivateAddresses: boolean;
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
    const reason = blockedReason(host, settings.allowPrivateAddresses);
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
      lookup: guardedLookup(settings.allowPrivateAddresses),
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
    const deadline = setTimeout(() => {
      failed(new DeadlineError());
      outgoing.destroy(new DeadlineError());
    }, settings.timeoutMs);
    outgoing.on('error', failed);
    outgoing.end(request.body);
  });
}
