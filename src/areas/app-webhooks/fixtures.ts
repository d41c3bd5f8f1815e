// Deliveries you can carry: an app's deliveries as a fixtures file (each request exactly as it was
// posted: headers, body, signatures; never the secret), and the replay of such a file to a loopback
// receiver, re-signed with a secret the tester gives (src/cli/replay.ts; docs/testing.md).
import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { LOOPBACK_NETWORKS } from '../../config.ts';
import { isoSeconds } from '../../platform/clock.ts';
import { requestBody, signatureHeaders } from './engine.ts';
import { addressClass, postWebhook } from './sender.ts';
import type * as store from './store.ts';

/** The signature headers: recorded in a fixture, replaced when it is replayed with a secret. */
const SIGNATURES = ['x-hub-signature', 'x-hub-signature-256'] as const;

export interface Fixture {
  /** The attempt's id on the server it came from. */
  id: number;
  guid: string;
  event: string;
  action: string | null;
  installation_id: number | null;
  repository_id: number | null;
  redelivery: boolean;
  delivered_at: string;
  /** What the receiver answered then. */
  status: string;
  status_code: number;
  /** The request headers as posted (content-length aside). */
  headers: Record<string, string>;
  /** The body's exact text as posted: signatures are over its UTF-8 bytes. */
  body: string;
  /** The signature headers of the post, or null when the webhook had no secret. */
  signatures: { 'x-hub-signature': string; 'x-hub-signature-256': string } | null;
}

export interface FixturesFile {
  app: string;
  since: string | null;
  exported_at: string;
  fixtures: Fixture[];
}

/** One posted attempt as a fixture: its body rebuilt from the payload as the engine built it (by the content type it sent). */
export function fixtureOf(row: Awaited<ReturnType<typeof store.postedDeliveries>>[number]): Fixture {
  const headers = JSON.parse(row.request_headers!) as Record<string, string>;
  const body = requestBody(headers['content-type'] === 'application/x-www-form-urlencoded', row.payload).toString('utf8');
  const signed = SIGNATURES.every((name) => typeof headers[name] === 'string');
  return {
    id: row.id,
    guid: row.guid,
    event: row.event,
    action: row.action,
    installation_id: row.installation_id,
    repository_id: row.repository_id,
    redelivery: Boolean(row.redelivery),
    delivered_at: isoSeconds(row.delivered_at!),
    status: row.status!,
    status_code: row.status_code!,
    headers,
    body,
    signatures: signed ? { 'x-hub-signature': headers['x-hub-signature']!, 'x-hub-signature-256': headers['x-hub-signature-256']! } : null,
  };
}

/**
 * Why a replay may not post to `to`, or null when it may: it is a test tool, for a receiver on this
 * machine, so every address the host names must be loopback (the delivery guard's classifier).
 */
export async function refusedReceiver(to: string): Promise<string | null> {
  let url: URL;
  try {
    url = new URL(to);
  } catch {
    return `--to must be an http URL of a loopback receiver, like http://127.0.0.1:8080/hook, got "${to}"`;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return `--to must be an http(s) URL, got "${to}"`;
  const host = url.hostname.replace(/^\[|\]$/g, '');
  let addresses: string[];
  try {
    addresses = isIP(host) ? [host] : (await lookup(host, { all: true })).map((found) => found.address);
  } catch {
    return `--to: ${host} does not resolve`;
  }
  const outside = addresses.find((address) => addressClass(address) !== 'loopback');
  return outside === undefined ? null : `--to must be a loopback receiver (127.0.0.0/8, ::1): ${host} is ${outside === host ? `a ${addressClass(host)} address` : `${outside}, a ${addressClass(outside)} address`}; replay is a test tool`;
}

/** The outcome of one replayed post. */
export interface Replayed {
  fixture: Fixture;
  status: string;
  statusCode: number;
}

/**
 * Posts each fixture in order to `to` through the delivery sender (only loopback addresses pass its
 * guard here), its body as recorded; with a secret, both signature headers made anew with it, else
 * as recorded. `each` is told every outcome as it comes.
 */
export async function replayFixtures(fixtures: Fixture[], options: { to: string; secret?: string | undefined; timeoutMs?: number }, each: (replayed: Replayed) => void): Promise<Replayed[]> {
  const settings = {
    timeoutMs: options.timeoutMs ?? 10_000,
    responseBodyLimit: 1024,
    allowPrivateAddresses: false,
    allowNetworks: LOOPBACK_NETWORKS.map(([address, prefix]) => `${address}/${prefix}`),
  };
  const outcomes: Replayed[] = [];
  for (const fixture of fixtures) {
    const body = Buffer.from(fixture.body, 'utf8');
    const headers = { ...fixture.headers };
    delete headers['content-length'];
    if (options.secret !== undefined) {
      for (const name of SIGNATURES) delete headers[name];
      Object.assign(headers, signatureHeaders(options.secret, body));
    }
    const result = await postWebhook({ url: options.to, headers, body, insecureSsl: true }, settings);
    const replayed = { fixture, status: result.status, statusCode: result.statusCode };
    outcomes.push(replayed);
    each(replayed);
  }
  return outcomes;
}
