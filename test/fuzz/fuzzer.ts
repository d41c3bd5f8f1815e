// A seeded fuzzer for the public API: it reads the server's own GET /openapi.json and, for every
// operation, sends random and mutated path values, query values, headers and bodies (wrong types,
// huge, deeply nested, unicode, NUL bytes, ids >= 2^31, 15-digit numbers, 1e20, negatives,
// `__proto__` / `toString` / `constructor` keys and scope or permission names) with credentials of
// every kind. The goal is no answer >= 500 and no hang; every such answer is kept with the request
// that made it, so it can be replayed (`replayCommand`).
import http from 'node:http';
import { fileURLToPath } from 'node:url';
import { createPrivateKey } from 'node:crypto';
import { SignJWT, importPKCS8 } from 'jose';
import { AREAS } from '../../src/app.ts';
import { loadSeedFile } from '../../src/admin/seed.ts';
import { JournalFilter } from '../../src/testing/journal.ts';
import * as admin from '../../src/admin/schemas.ts';
import { OperatorBody } from '../../src/areas/assistant-metrics/routes.ts';
import { RedeliverFailedBody } from '../../src/areas/app-webhooks/routes.ts';
import { CommentBody, IssueBody, IssueChangeBody } from '../../src/core/issues/admin-routes.ts';
import { ADMIN_TOKEN, type TestServer } from '../helpers/server.ts';

const DEMO_SEED = fileURLToPath(new URL('../../src/admin/demo.yaml', import.meta.url));

const NAME = { type: 'string' };

/**
 * The admin API's operations (hidden from /openapi.json), every one the server has but those in
 * ADMIN_LEFT_OUT (test/clients/fuzz.test.ts checks the two lists against the source), with their body
 * schemas: the operator's creates take names that end up in paths and in git (repository and branch
 * names). Among them the test server's own: the clock, the jobs drain, the request journal, reset
 * and snapshots (the fuzzer restores its own snapshot after a reset or a restore, and every
 * RESTORE_EVERY requests, so that the demo data stays there to be reached).
 */
export const ADMIN_OPERATIONS: { method: string; path: string; body?: object; query?: string[] }[] = [
  { method: 'POST', path: '/_admin/users', body: admin.UserBody },
  { method: 'DELETE', path: '/_admin/users/{login}' },
  { method: 'PUT', path: '/_admin/users/{login}/suspended', body: { type: 'object', properties: { reason: { type: 'string', maxLength: 1000 } } } },
  { method: 'DELETE', path: '/_admin/users/{login}/suspended' },
  { method: 'POST', path: '/_admin/enterprises', body: admin.EnterpriseBody },
  { method: 'POST', path: '/_admin/orgs', body: admin.OrgBody },
  { method: 'PUT', path: '/_admin/orgs/{org}/assistant', body: OperatorBody },
  { method: 'POST', path: '/_admin/orgs/{org}/teams', body: admin.TeamBody },
  { method: 'PUT', path: '/_admin/orgs/{org}/teams/{team_slug}/members/{login}' },
  { method: 'DELETE', path: '/_admin/orgs/{org}/teams/{team_slug}/members/{login}' },
  { method: 'POST', path: '/_admin/repos', body: admin.RepoBody },
  { method: 'GET', path: '/_admin/repos/{owner}/{repo}' },
  { method: 'PATCH', path: '/_admin/repos/{owner}/{repo}', body: admin.RepoChangeBody },
  { method: 'DELETE', path: '/_admin/repos/{owner}/{repo}' },
  { method: 'PUT', path: '/_admin/repos/{owner}/{repo}/subscription', body: admin.WatchBody },
  { method: 'PUT', path: '/_admin/repos/{owner}/{repo}/collaborators/{login}', body: admin.RepositoryAccessBody },
  { method: 'DELETE', path: '/_admin/repos/{owner}/{repo}/collaborators/{login}' },
  { method: 'PUT', path: '/_admin/repos/{owner}/{repo}/issue-types/{name}', body: { type: 'object', required: ['is_enabled'], properties: { is_enabled: { type: 'boolean' } } } },
  { method: 'POST', path: '/_admin/repos/{owner}/{repo}/issues', body: IssueBody },
  { method: 'PATCH', path: '/_admin/repos/{owner}/{repo}/issues/{number}', body: IssueChangeBody },
  { method: 'POST', path: '/_admin/repos/{owner}/{repo}/issues/{number}/comments', body: CommentBody },
  { method: 'PUT', path: '/_admin/orgs/{org}/members/{login}', body: admin.OrgMembershipBody },
  { method: 'DELETE', path: '/_admin/orgs/{org}/members/{login}' },
  { method: 'PUT', path: '/_admin/orgs/{org}/teams/{team_slug}/repos/{owner}/{repo}', body: admin.RepositoryAccessBody },
  { method: 'DELETE', path: '/_admin/orgs/{org}/teams/{team_slug}/repos/{owner}/{repo}' },
  { method: 'POST', path: '/_admin/tokens', body: admin.TokenBody },
  { method: 'POST', path: '/_admin/apps', body: admin.AppBody },
  { method: 'PATCH', path: '/_admin/apps/{app_slug}', body: admin.AppUpdateBody },
  { method: 'POST', path: '/_admin/apps/{app_slug}/installations', body: admin.InstallationBody },
  { method: 'PATCH', path: '/_admin/apps/{app_slug}/installations/{installation_id}', body: admin.InstallationUpdateBody },
  { method: 'POST', path: '/_admin/apps/{app_slug}/authorizations', body: admin.AuthorizationBody },
  { method: 'GET', path: '/_admin/apps/{app_slug}/deliveries', query: ['page', 'per_page'] },
  { method: 'GET', path: '/_admin/apps/{app_slug}/deliveries/fixtures', query: ['since'] },
  { method: 'POST', path: '/_admin/apps/{app_slug}/deliveries/redeliver', body: RedeliverFailedBody },
  { method: 'GET', path: '/_admin/apps/{app_slug}/deliveries/{delivery_id}' },
  { method: 'POST', path: '/_admin/apps/{app_slug}/deliveries/{delivery_id}/attempts' },
  {
    method: 'POST', path: '/_admin/events', body: {
      type: 'object', required: ['event'], properties: {
        event: { enum: ['push', 'issues', 'issue_comment', 'pull_request', 'installation', 'ping', 'x'] }, action: { enum: ['opened', 'created', 'closed'] },
        repository: { type: 'string' }, account: { type: 'string' }, sender: { type: 'string' }, payload: { type: 'object', additionalProperties: { type: 'string' } },
      },
    },
  },
  {
    method: 'POST', path: '/_admin/notifications', body: {
      type: 'object', required: ['login', 'repository', 'subject', 'reason'], properties: {
        login: NAME, repository: NAME, reason: { enum: ['mention', 'subscribed', 'manual', 'author', 'x'] },
        subject: { type: 'object', required: ['type', 'title', 'url'], properties: { type: { enum: ['Issue', 'Release', 'Discussion'] }, title: NAME, url: { type: 'string', format: 'uri' } } },
      },
    },
  },
  { method: 'GET', path: '/_admin/migrations/{migration_id}' },
  ...['users', 'orgs', 'repos', 'apps', 'tokens'].map((list) => ({ method: 'GET', path: `/_admin/${list}`, query: ['page', 'per_page', ...(list === 'tokens' ? ['login'] : [])] })),
  { method: 'GET', path: '/_admin/orgs/{org}/teams', query: ['page', 'per_page'] },
  { method: 'GET', path: '/_admin/apps/{app_slug}/installations', query: ['page', 'per_page'] },
  { method: 'GET', path: '/_admin/clock' },
  { method: 'POST', path: '/_admin/clock', body: { type: 'object', required: ['advance_seconds'], properties: { advance_seconds: { type: 'integer', minimum: 0, maximum: 7200 } } } },
  // The drain waits up to timeout_seconds for jobs no worker runs here (CODEHOST_WORKER=0), then
  // answers its 504: the fuzzer keeps the wait short (`shortDrain`).
  { method: 'POST', path: '/_admin/jobs/drain', body: { type: 'object', properties: { timeout_seconds: { type: 'integer', minimum: 0, maximum: 2 }, wait_for_deferred: { type: 'boolean' } } } },
  { method: 'GET', path: '/_admin/requests', query: ['method', 'path', 'operation', 'login', 'app', 'installation', 'token', 'warning', 'status', 'since', 'page', 'per_page'] },
  { method: 'GET', path: '/_admin/requests/permissions-used', query: ['method', 'path', 'operation', 'login', 'app', 'installation', 'token', 'warning', 'status', 'since'] },
  { method: 'POST', path: '/_admin/requests/count', body: JournalFilter },
  { method: 'DELETE', path: '/_admin/requests' },
  { method: 'GET', path: '/_admin/faults' },
  { method: 'DELETE', path: '/_admin/faults' },
  { method: 'DELETE', path: '/_admin/faults/{fault_id}' },
  { method: 'POST', path: '/_admin/reset', body: { type: 'object', properties: { to: { enum: ['empty', 'demo', 'seed'] }, seed: { enum: ['users: [{login: seeded}]', '{}', 'users: 1', 'repos: [{owner: nobody, name: x}]', ': :'] }, journal: { enum: ['keep', 'clear', 'drop'] } } } },
  { method: 'GET', path: '/_admin/snapshots' },
  { method: 'POST', path: '/_admin/snapshots', body: { type: 'object', required: ['name'], properties: { name: { enum: ['fuzz', 'fuzz-2', 'a'] } } } },
  { method: 'POST', path: '/_admin/snapshots/{name}/restore', body: { type: 'object', properties: { journal: { enum: ['keep', 'clear', 'drop'] } } } },
  { method: 'DELETE', path: '/_admin/snapshots/{name}' },
];

/** Admin operations the fuzzer does not send, each with why. */
export const ADMIN_LEFT_OUT: Record<string, string> = {
  'POST /_admin/faults': 'it makes the server fail on purpose: the 5xx and the waits that follow are the rule\'s answers',
};

/** The fuzzer's own snapshot (a name the fuzzed requests never use), of the demo data as prepared. */
const BASE_SNAPSHOT = 'fuzzer-base';
/** Requests between two restores of the fuzzer's snapshot (the deletes wear the demo data down). */
const RESTORE_EVERY = 2500;
/** Admin operations whose success changes the whole database: the fuzzer's snapshot is restored after them. */
const WHOLESALE = new Set(['POST /_admin/reset', 'POST /_admin/snapshots/{name}/restore']);

export interface FuzzRequest {
  operation: string;
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string;
}

export interface FuzzFailure {
  request: FuzzRequest;
  /** The status, or `hang` when no answer came within the timeout, or the client's error. */
  outcome: number | string;
  response?: string;
}

export interface FuzzReport {
  requests: number;
  operations: number;
  /** Operations that got at least one request. */
  covered: number;
  statuses: Record<string, number>;
  failures: FuzzFailure[];
  /** Connections reset before an answer whose retry on a fresh connection was answered. */
  resetsRetried: number;
  seconds: number;
  /** Requests sent as a race: the same request 2 to 4 times at once (each counts in `requests`). */
  raced: number;
  /** Restores of the fuzzer's own snapshot (after a reset or a restore, and every RESTORE_EVERY requests). */
  restores: number;
  /** The run stopped at its deadline (`maxSeconds`) before the budget was spent. */
  stoppedAtDeadline: boolean;
  /** Set when the server stopped answering: the run stopped there (see `Wedge`). */
  wedge: Wedge | null;
  /** The statuses of each admin operation. */
  adminStatuses: Record<string, Record<string, number>>;
}

/** A request the fuzzer sent, with what came of it and when. */
export interface Sent {
  request: FuzzRequest;
  /** Milliseconds since the run's start at which it was sent. */
  startedMs: number;
  /** How long it took; for one still in flight, how long it had waited. */
  ms: number;
  outcome: number | string | 'in flight';
}

/** The server stopped answering: a request waited past `wedgeSeconds`, or a hang with /healthz silent too. */
export interface Wedge {
  reason: string;
  /** What /healthz answered right then. */
  healthz: number | string;
  inFlight: Sent[];
  /** The last requests that ended, oldest first. */
  recent: Sent[];
}

export interface FuzzOptions {
  requests: number;
  seed: number;
  concurrency?: number;
  /** Milliseconds after which a request without an answer counts as a hang. */
  timeoutMs?: number;
  /** A request in flight this long (or a hang while /healthz does not answer) stops the run as a wedge. Default 30. */
  wedgeSeconds?: number;
  /** The run stops after this long, whatever is left of the budget. */
  maxSeconds?: number;
  /** Called every `progressEvery` requests. */
  progress?: (done: number, report: FuzzReport) => void;
  progressEvery?: number;
}

/** The settings of a server under fuzz: limits high enough that the fuzzer reaches the handlers. */
export const FUZZ_SERVER_ENV: Record<string, string> = {
  CODEHOST_RATE_LIMIT: '100000000',
  CODEHOST_RATE_LIMIT_ANONYMOUS: '100000000',
  CODEHOST_RATE_LIMIT_FAILED_LOGINS: '100000000',
  CODEHOST_RATE_LIMIT_CONTENT_PER_MINUTE: '100000000',
  CODEHOST_RATE_LIMIT_CONTENT_PER_HOUR: '100000000',
  CODEHOST_DATABASE_POOL_SIZE: '10',
  CODEHOST_WORKER: '0',
};

// ---------------------------------------------------------------- random

/** mulberry32: small, fast and seeded, so a run can be repeated exactly. */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export class Dice {
  readonly next: () => number;
  constructor(seed: number) {
    this.next = rng(seed);
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }
  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)]!;
  }
}

// ---------------------------------------------------------------- hostile values

const HOSTILE_NAMES = ['__proto__', 'toString', 'constructor', 'hasOwnProperty', 'valueOf', 'prototype', '__defineGetter__'];

export const HOSTILE_STRINGS: readonly string[] = [
  '', ' ', '\u0000', 'a\u0000b', 'mona\u0000', '.', '..', '../..', '../../etc/passwd', '-x', 'a..b', 'a b', '%', '%00',
  '%2e%2e', 'x'.repeat(300), 'y'.repeat(70_000), '😀', 'ß', 'İ', '\u202egnp', '\ud800', '\uffff', 'é\u0301', '<script>', "' OR 1=1 --",
  '"; DROP TABLE users; --', '${jndi}', '{{7*7}}', 'null', 'true', 'false', '[]', '{}', '1e20', '-1', '0', '1.5', 'NaN', 'Infinity',
  '0x10', ' 1', '1 ', '2147483647', '2147483648', '4294967296', '9007199254740993', '9223372036854775808', '123456789012345',
  '-2147483649', '1e308', '1e-7', '00001', '+1', '١٢٣', 'main', 'refs/heads/main', '@{-1}', 'a.lock', '/a', 'a/', 'a//b', 'HEAD',
  '2026-01-01T00:00:00Z', '2026-13-45T99:99:99Z', '0000-00-00', '9999-12-31T23:59:59Z', '-271821-04-20T00:00:00Z', 'v1:1',
  Buffer.from('v1:999999999999999').toString('base64url'), Buffer.from('v1:-1').toString('base64url'),
  Buffer.from('v1:abc').toString('base64url'), Buffer.from('v1:1e20').toString('base64url'), Buffer.from('v1:\u0000').toString('base64url'),
  Buffer.from('v1:2147483648').toString('base64url'), '999999999999999', '100000000000000', 'read', 'write', 'admin', 'all',
  ...HOSTILE_NAMES,
];

/** Short values that names, branch names and ids trip on: picked as often as all the others together. */
const HOSTILE_NAME_STRINGS: readonly string[] = [
  '.', '..', '-x', '--help', 'a..b', 'a b', '\u0000', 'a\u0000', 'a.lock', '/a', 'a/', 'a//b', 'a.', '.a', 'HEAD', 'a~1', 'a^', 'a:b', 'a@{1}',
  'a\\b', 'a*', 'a?', 'a[', '2147483648', '123456789012345', '-1', '0', '1e20', ...HOSTILE_NAMES,
];

export const HOSTILE_NUMBERS: readonly number[] = [
  0, -1, 1, 2, 1.5, -0.5, 2 ** 31 - 1, 2 ** 31, 2 ** 32, 2 ** 53, 2 ** 63, 1e20, 1e308, -1e20, 123456789012345, 999999999999999,
  -2147483649, 100, 101, 1000000,
];

function deep(depth: number, array: boolean): string {
  return array ? '['.repeat(depth) + ']'.repeat(depth) : '{"a":'.repeat(depth) + '1' + '}'.repeat(depth);
}

/** Raw JSON texts, some not JSON at all. */
const HOSTILE_BODIES: readonly string[] = [
  '', ' ', 'null', 'true', '0', '1e20', '"x"', '[]', '[{}]', '{', '{"a":', '}', '\u0000', '{"a":"\\u0000"}', 'undefined', 'NaN',
  '{"__proto__":{"admin":true}}', '{"constructor":{"prototype":{"x":1}}}', '{"toString":1}', deep(200, false), deep(5000, true),
  deep(20000, false), `"${'z'.repeat(200_000)}"`, `[${'1,'.repeat(50_000)}1]`, '{"a":1,"a":2}', '\ufeff{}', '{"\\ud800":1}',
];

function hostileValue(dice: Dice): unknown {
  switch (dice.int(0, 9)) {
    case 0:
    case 1:
    case 2:
    case 3:
      return dice.pick(dice.chance(0.5) ? HOSTILE_NAME_STRINGS : HOSTILE_STRINGS);
    case 4:
    case 5:
      return dice.pick(HOSTILE_NUMBERS);
    case 6:
      return dice.pick([null, true, false, [], {}, [1, 'a', null], { a: 1 }]);
    case 7:
      return JSON.parse(dice.pick(['{"__proto__":"x"}', '{"toString":"read"}', '{"constructor":"write"}', '[["a"]]', '[{"a":[{}]}]']));
    case 8:
      return JSON.parse(deep(dice.int(10, 300), dice.chance(0.5)));
    default:
      return Object.fromEntries(HOSTILE_NAMES.map((name) => [name, dice.pick(['read', 'write', 1, null, 'all'])]));
  }
}

// ---------------------------------------------------------------- schemas → values

interface Schema {
  type?: string | string[];
  enum?: unknown[];
  const?: unknown;
  anyOf?: Schema[];
  oneOf?: Schema[];
  allOf?: Schema[];
  properties?: Record<string, Schema>;
  required?: string[];
  additionalProperties?: boolean | Schema;
  patternProperties?: Record<string, Schema>;
  items?: Schema;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  format?: string;
  minItems?: number;
  maxItems?: number;
}

/** Names and ids a valid request would use (the demo data's), by parameter name. */
interface Fixtures {
  names: Record<string, string[]>;
  ids: Record<string, number[]>;
}

function plausibleString(dice: Dice, name: string, schema: Schema, fixtures: Fixtures): string {
  const known = fixtures.names[name];
  // Names that creates take are fresh half the time, so that the creates get past "already exists".
  if (known && dice.chance(['name', 'login', 'slug'].includes(name) ? 0.5 : 0.8)) return dice.pick(known);
  if (schema.format === 'date-time') return dice.pick(['2026-01-01T00:00:00Z', '2020-06-01T12:00:00.000Z', '2030-01-01T00:00:00+02:00']);
  if (schema.format === 'date') return dice.pick(['2026-01-01', '2025-12-31']);
  if (schema.format === 'uri') return dice.pick(['http://127.0.0.1:9/hook', 'https://example.invalid/x']);
  if (/url$/.test(name)) return 'http://127.0.0.1:9/hook';
  if (/permission|scope/.test(name)) return dice.pick(['read', 'write', 'metadata', 'issues', 'repo']);
  const min = schema.minLength ?? 1;
  return `${name.replace(/[^a-z]/g, '') || 'x'}-${dice.int(0, 999)}`.padEnd(min, 'x');
}

function plausibleInteger(dice: Dice, name: string, schema: Schema, fixtures: Fixtures): number {
  const known = fixtures.ids[name];
  if (known?.length && dice.chance(0.7)) return dice.pick(known);
  const min = schema.minimum ?? 0;
  const max = schema.maximum ?? min + 30;
  return dice.int(min, Math.min(max, min + 100));
}

/** A value that satisfies the schema most of the time (the mutations come after). */
function generate(dice: Dice, schema: Schema | undefined, name: string, fixtures: Fixtures, depth = 0): unknown {
  if (!schema || depth > 6) return dice.pick(['x', 1, true, null]);
  if (schema.const !== undefined) return schema.const;
  if (schema.enum?.length) return dice.pick(schema.enum);
  const alternatives = schema.anyOf ?? schema.oneOf;
  if (alternatives?.length) return generate(dice, dice.pick(alternatives), name, fixtures, depth + 1);
  if (schema.allOf?.length) return generate(dice, schema.allOf[0], name, fixtures, depth + 1);
  const type = Array.isArray(schema.type) ? dice.pick(schema.type) : schema.type;
  switch (type) {
    case 'string':
      return plausibleString(dice, name, schema, fixtures);
    case 'integer':
      return plausibleInteger(dice, name, schema, fixtures);
    case 'number':
      return dice.int(0, 100);
    case 'boolean':
      return dice.chance(0.5);
    case 'null':
      return null;
    case 'array': {
      const count = dice.int(schema.minItems ?? 0, Math.min(schema.maxItems ?? 3, (schema.minItems ?? 0) + 3));
      return Array.from({ length: count }, () => generate(dice, schema.items, singular(name), fixtures, depth + 1));
    }
    default: {
      if (!schema.properties && !schema.additionalProperties && !schema.patternProperties && type !== 'object') return dice.pick(['x', 1]);
      const object: Record<string, unknown> = {};
      const required = new Set(schema.required ?? []);
      for (const [key, property] of Object.entries(schema.properties ?? {})) {
        if (required.has(key) || dice.chance(0.5)) object[key] = generate(dice, property, key, fixtures, depth + 1);
      }
      const extra = typeof schema.additionalProperties === 'object' ? schema.additionalProperties : Object.values(schema.patternProperties ?? {})[0];
      if (extra) {
        for (let i = dice.int(0, 3); i > 0; i--) {
          const key = dice.pick([...(fixtures.names.permission_name ?? ['metadata']), ...HOSTILE_NAMES]);
          object[key] = generate(dice, extra, key, fixtures, depth + 1);
        }
      }
      return object;
    }
  }
}

function singular(name: string): string {
  return name.endsWith('ies') ? `${name.slice(0, -3)}y` : name.replace(/s$/, '');
}

/** Replaces one value somewhere in the (JSON) value with a hostile one, or adds a hostile key. */
function mutate(dice: Dice, value: unknown, depth = 0): unknown {
  if (depth > 4 || value === null || typeof value !== 'object' || dice.chance(0.25)) {
    return depth === 0 && dice.chance(0.5) ? value : hostileValue(dice);
  }
  if (Array.isArray(value)) {
    if (!value.length || dice.chance(0.3)) return [...value, hostileValue(dice)];
    const index = dice.int(0, value.length - 1);
    const copy = [...value];
    copy[index] = mutate(dice, copy[index], depth + 1);
    return copy;
  }
  const copy: Record<string, unknown> = JSON.parse(JSON.stringify(value));
  const keys = Object.keys(copy);
  if (!keys.length || dice.chance(0.25)) {
    const key = dice.pick([...HOSTILE_NAMES, 'x', '', '\u0000', 'a.b']);
    Object.defineProperty(copy, key, { value: hostileValue(dice), enumerable: true, configurable: true, writable: true });
    return copy;
  }
  if (dice.chance(0.15)) {
    delete copy[dice.pick(keys)];
    return copy;
  }
  const key = dice.pick(keys);
  copy[key] = mutate(dice, copy[key], depth + 1);
  return copy;
}

// ---------------------------------------------------------------- credentials

export interface Credential {
  label: string;
  /** The Authorization header, or null for anonymous. */
  authorization: () => string | null;
}

const DEMO_APP = { id: 0, clientId: 'Iv1.demoapp0000000001', clientSecret: 'demo-client-secret-0000000000000000000000' };

function basic(user: string, password: string): string {
  return `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
}

function unsignedJwt(header: object, payload: object, signature = 'c2ln'): string {
  const part = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
  return `${part(header)}.${part(payload)}.${signature}`;
}

/** Forged and malformed credentials: each must be a 401 (or a 404 where the platform says so). */
function forgedCredentials(now: number, appId: number): string[] {
  const payload = (iss: unknown) => ({ iss, iat: now - 30, exp: now + 300 });
  const rs = { alg: 'RS256', typ: 'JWT' };
  return [
    ...[1e21, 2 ** 31, 123456789012345, -1, 0, 1.5, '1\u0000', 'x\u0000', [appId], [String(appId)], { id: appId }, null, true, '', ' 1', '__proto__', 'toString', '99999999999999999999']
      .map((iss) => `Bearer ${unsignedJwt(rs, payload(iss))}`),
    `Bearer ${unsignedJwt({ alg: 'none' }, payload(appId), '')}`,
    `Bearer ${unsignedJwt({ alg: 'HS256' }, payload(appId))}`,
    `Bearer ${unsignedJwt(rs, { iss: appId, iat: 'x', exp: [] })}`,
    `Bearer ${unsignedJwt(rs, { iss: appId, iat: now - 30, exp: 1e300 })}`,
    'Bearer a.b.c', 'Bearer ....', 'Bearer e30.e30.e30', 'Bearer chp_0000000000000000000000000000000000000', 'Bearer ü', 'token ghp_x',
    'Bearer', 'Bearer  ', `Bearer ${'t'.repeat(8000)}`, 'Basic', 'Basic !!!', basic('\u0000', 'x'), basic(`${DEMO_APP.clientId}\u0000`, DEMO_APP.clientSecret),
    basic(DEMO_APP.clientId, '\u0000'), basic('__proto__', 'x'), basic('x'.repeat(5000), 'y'), Buffer.from('no colon').toString('base64'),
    `Basic ${Buffer.from([0xff, 0xfe, 0x3a, 0x00]).toString('base64')}`, 'Digest x', 'Bearer \u00ff\u00fe',
  ];
}

async function signAppJwt(privateKeyPem: string, appId: number | string, nowSeconds: number): Promise<string> {
  const pkcs8 = createPrivateKey(privateKeyPem).export({ type: 'pkcs8', format: 'pem' }).toString();
  const key = await importPKCS8(pkcs8, 'RS256');
  return new SignJWT({}).setProtectedHeader({ alg: 'RS256' }).setIssuer(String(appId)).setIssuedAt(nowSeconds - 30).setExpirationTime(nowSeconds + 540).sign(key);
}

// ---------------------------------------------------------------- setup

interface Operation {
  id: string;
  method: string;
  path: string;
  pathParams: { name: string; schema: Schema }[];
  queryParams: { name: string; schema: Schema }[];
  body?: Schema;
  /** An admin API operation: called with the admin token (sometimes a wrong one), under /_admin. */
  admin?: boolean;
}

interface Setup {
  operations: Operation[];
  credentials: Credential[];
  fixtures: Fixtures;
  forged: string[];
  /** By operation, the credentials that got past authentication and the access rule (see `probe`). */
  accepted: Map<string, Credential[]>;
  /** Refreshes the app JWTs (they live 10 minutes). */
  refresh(): Promise<void>;
}

function operationsOf(doc: any): Operation[] {
  const operations: Operation[] = [];
  for (const [path, item] of Object.entries<any>(doc.paths ?? {})) {
    for (const [method, op] of Object.entries<any>(item)) {
      if (!['get', 'post', 'put', 'patch', 'delete'].includes(method)) continue;
      const parameters: any[] = op.parameters ?? [];
      operations.push({
        id: `${method.toUpperCase()} ${path}`,
        method: method.toUpperCase(),
        path,
        pathParams: parameters.filter((p) => p.in === 'path').map((p) => ({ name: p.name, schema: p.schema ?? {} })),
        queryParams: parameters.filter((p) => p.in === 'query').map((p) => ({ name: p.name, schema: p.schema ?? {} })),
        body: op.requestBody?.content?.['application/json']?.schema,
      });
    }
  }
  return operations;
}

const INTEGER_PARAMS = new Set(['installation_id', 'migration_id', 'number', 'delivery_id', 'fault_id']);

function adminOperations(): Operation[] {
  const pageSchema: Record<string, Schema> = { page: { type: 'integer', minimum: 1 }, per_page: { type: 'integer', minimum: 1 }, login: { type: 'string' } };
  return ADMIN_OPERATIONS.map((op) => ({
    id: `${op.method} ${op.path}`,
    method: op.method,
    path: op.path,
    admin: true,
    pathParams: [...op.path.matchAll(/\{([^}]+)\}/g)].map((m) => ({ name: m[1]!, schema: (INTEGER_PARAMS.has(m[1]!) ? { type: 'integer' } : { type: 'string' }) as Schema })),
    queryParams: (op.query ?? []).map((name) => ({ name, schema: pageSchema[name] ?? { type: 'string' } })),
    body: op.body as Schema | undefined,
  }));
}

async function adminCall(server: TestServer, method: string, path: string, body?: unknown): Promise<any> {
  return server.admin(method, path, body);
}

/** Loads the demo data, adds hostile credentials, mints the tokens, reads /openapi.json. */
export async function prepare(server: TestServer): Promise<Setup> {
  await loadSeedFile(server.server.ctx, AREAS, DEMO_SEED);
  const doc = await (await fetch(`${server.url}/openapi.json`)).json();
  const operations = [...operationsOf(doc), ...adminOperations()];

  const apps = await adminCall(server, 'GET', '/apps');
  const appList: any[] = Array.isArray(apps) ? apps : (apps.apps ?? []);
  const demoApp = appList.find((a) => a.slug === 'demo-app');
  DEMO_APP.id = demoApp.id;
  const privateKey = (await import('yaml')).parse((await import('node:fs')).readFileSync(DEMO_SEED, 'utf8')).apps[0].private_key as string;

  // Hostile names among scopes and permissions: the admin API may refuse them (then they are not used).
  const hostile: Credential[] = [];
  const tryToken = async (label: string, body: unknown) => {
    const response = await server.adminRaw('POST', '/tokens', body);
    if (response.status < 300) hostile.push({ label, authorization: () => `Bearer ${response.body.token}` });
  };
  for (const name of ['__proto__', 'toString', 'constructor']) {
    await tryToken(`classic token with scope ${name}`, { login: 'hubot', kind: 'classic', scopes: ['repo', name] });
    await tryToken(`fine-grained token with permission ${name}`, {
      login: 'hubot', kind: 'fine_grained', resource_owner: 'acme', permissions: JSON.parse(`{"metadata":"read","${name}":"write"}`),
    });
  }
  const hostileApp = await server.adminRaw('POST', '/apps', { slug: 'proto-app', permissions: JSON.parse('{"metadata":"read","toString":"read","__proto__":"write"}') });

  const fixtures: Fixtures = {
    names: {
      owner: ['acme', 'mona', 'ACME'], org: ['acme', 'Acme'], username: ['mona', 'hubot', 'octo', 'acme'], enterprise: ['acme-corp'],
      repo: ['widgets', 'secret-sauce', 'handbook', 'dotfiles', 'widgets.git'], team_slug: ['reviewers'], app_slug: ['demo-app', 'proto-app'],
      client_id: [DEMO_APP.clientId], repo_name: ['widgets', 'dotfiles'], login: ['mona', 'hubot', 'octo'], name: ['widgets', 'Bug', 'fuzz', 'fuzz-2'],
      repository: ['acme/widgets', 'widgets'], default_branch: ['main', 'release/1.x'], account: ['acme', 'mona'], permission_name: ['metadata', 'issues', 'administration', 'organization_administration'],
    },
    ids: {},
  };

  const state = { now: 0, jwt: '', hostileJwt: '', installationToken: '', forged: [] as string[] };
  const refresh = async () => {
    state.now = Math.floor(Date.parse((await adminCall(server, 'GET', '/clock')).now) / 1000);
    state.jwt = await signAppJwt(privateKey, DEMO_APP.id, state.now);
    if (hostileApp.status < 300) state.hostileJwt = await signAppJwt(hostileApp.body.private_key, hostileApp.body.id, state.now);
    state.forged.splice(0, state.forged.length, ...forgedCredentials(state.now, DEMO_APP.id));
  };
  await refresh();
  const installations = await server.api('GET', '/app/installations', { authorization: `Bearer ${state.jwt}` });
  const installationIds: number[] = (installations.body ?? []).map((i: any) => i.id);
  if (installationIds[0]) {
    const minted = await server.api('POST', `/app/installations/${installationIds[0]}/access_tokens`, { authorization: `Bearer ${state.jwt}`, body: {} });
    if (minted.status === 201) state.installationToken = minted.body.token;
  }
  if (hostileApp.status < 300) {
    const installation = await server.adminRaw('POST', `/apps/proto-app/installations`, { account: 'acme', repositories: 'all' });
    if (installation.status < 300) {
      installationIds.push(installation.body.id);
      const minted = await server.api('POST', `/app/installations/${installation.body.id}/access_tokens`, { authorization: `Bearer ${state.hostileJwt}`, body: {} });
      if (minted.status === 201) hostile.push({ label: 'installation token of an app with hostile permission names', authorization: () => `Bearer ${minted.body.token}` });
    }
  }

  // Ids that exist, so that handlers past the lookups are reached too.
  const monaClassic = 'Bearer chp_DemoMonaClassicToken00000000013Mkcu6';
  const configuration = await server.api('POST', '/orgs/acme/code-security/configurations', { authorization: monaClassic, body: { name: 'Fuzz' } });
  const issueType = await server.api('POST', '/orgs/acme/issue-types', { authorization: monaClassic, body: { name: 'Fuzz', is_enabled: true } });
  const migration = await server.api('POST', '/user/migrations', { authorization: monaClassic, body: { repositories: ['acme/widgets'] } });
  const ids = (...values: unknown[]) => values.filter((v): v is number => typeof v === 'number');
  fixtures.ids = {
    installation_id: installationIds,
    configuration_id: ids(configuration.body?.id, 1, 2),
    issue_type_id: ids(issueType.body?.id, 1),
    migration_id: ids(migration.body?.id, 1),
    thread_id: [1, 2, 3],
    delivery_id: [1, 2],
    repository_id: [1, 2, 3],
    repository_ids: [1, 2, 3],
    selected_repository_ids: [1, 2, 3],
    issue_number: [1], pull_number: [1], comment_id: [1], event_id: [1], number: [1, 2], fault_id: [1],
  };
  // The fuzzer's own snapshot of all this, restored after a reset or a restore (see WHOLESALE).
  await server.admin('POST', '/snapshots', { name: BASE_SNAPSHOT });

  const credentials: Credential[] = [
    { label: 'anonymous', authorization: () => null },
    { label: 'admin token', authorization: () => `Bearer ${ADMIN_TOKEN}` },
    { label: 'classic token (mona)', authorization: () => monaClassic },
    { label: 'classic token (hubot)', authorization: () => 'Bearer chp_DemoHubotClassicToken0000000011LM121' },
    { label: 'fine-grained token', authorization: () => 'Bearer chpat_DemoMonaFineGrainedToken0000010GGHiN' },
    { label: 'OAuth token', authorization: () => 'Bearer cho_DemoMonaOAuthToken0000000000010H4Nxz' },
    { label: 'app JWT', authorization: () => `Bearer ${state.jwt}` },
    { label: 'installation token', authorization: () => (state.installationToken ? `Bearer ${state.installationToken}` : null) },
    { label: 'app Basic auth', authorization: () => basic(DEMO_APP.clientId, DEMO_APP.clientSecret) },
    ...hostile,
  ];
  if (hostileApp.status < 300) credentials.push({ label: 'JWT of an app with hostile permission names', authorization: () => `Bearer ${state.hostileJwt}` });
  return { operations, credentials, fixtures, forged: state.forged, accepted: new Map(), refresh };
}

// ---------------------------------------------------------------- requests

/** encodeURIComponent, but a lone surrogate is sent as the bytes of U+FFFD rather than thrown on. */
function encode(text: string): string {
  try {
    return encodeURIComponent(text);
  } catch {
    return [...Buffer.from(text, 'utf8')].map((byte) => `%${byte.toString(16).padStart(2, '0')}`).join('');
  }
}

function encodeSegment(dice: Dice, value: unknown): string {
  const text = typeof value === 'string' ? value : JSON.stringify(value) ?? 'undefined';
  // Mostly well encoded; sometimes a raw percent sequence that is not valid UTF-8 or not valid at all.
  if (dice.chance(0.05)) return dice.pick(['%zz', '%c0%80', '%ff', '%e2%82', '%', '%00', '%2F', '..', '.', '%2e%2e']);
  return encode(text);
}

function queryValue(dice: Dice, value: unknown): string {
  return encode(typeof value === 'string' ? value : JSON.stringify(value) ?? '');
}

/**
 * One request for the operation: mostly valid parts with one or more hostile ones, usually with a
 * credential the operation accepts (learnt by `probe`). `plain`: valid values only, with `credential`.
 */
export function makeRequest(dice: Dice, operation: Operation, setup: Setup, plain?: { credential: Credential }): FuzzRequest {
  const hostility = plain ? 0 : dice.next();
  const path = operation.path.replace(/\{([^}]+)\}/g, (_match, name: string) => {
    const parameter = operation.pathParams.find((p) => p.name === name);
    const value = dice.chance(0.35 * hostility * 2) ? hostileValue(dice) : generate(dice, parameter?.schema, name, setup.fixtures);
    return plain ? encode(String(value)) : encodeSegment(dice, value);
  });

  const query: string[] = [];
  for (const parameter of operation.queryParams) {
    if (!dice.chance(0.4)) continue;
    const value = dice.chance(0.5 * hostility * 2) ? hostileValue(dice) : generate(dice, parameter.schema, parameter.name, setup.fixtures);
    if (Array.isArray(value) && dice.chance(0.5)) for (const item of value) query.push(`${parameter.name}=${queryValue(dice, item)}`);
    else query.push(`${parameter.name}=${queryValue(dice, value)}`);
    if (dice.chance(0.05)) query.push(`${parameter.name}=${queryValue(dice, hostileValue(dice))}`);
  }
  if (!plain && dice.chance(0.1)) query.push(`${encodeURIComponent(dice.pick([...HOSTILE_NAMES, 'page', 'per_page', 'x']))}=${queryValue(dice, hostileValue(dice))}`);
  if (!plain && dice.chance(0.05)) query.push(dice.pick(['page=1e20', 'per_page=1e20', 'page=2147483648', 'per_page=0', 'page=-1', 'page', '=', '&&', 'a[b]=1', 'page[]=1']));

  const headers: Record<string, string> = { accept: 'application/vnd.vendor+json' };
  const accepted = setup.accepted.get(operation.id);
  const credential = plain?.credential ?? (accepted?.length && dice.chance(0.7) ? dice.pick(accepted) : dice.pick(setup.credentials));
  let authorization = credential.authorization();
  if (!plain && dice.chance(0.1)) authorization = dice.pick(setup.forged);
  if (operation.admin && !dice.chance(0.1)) authorization = `Bearer ${ADMIN_TOKEN}`;
  if (authorization) headers.authorization = authorization;
  if (!plain && dice.chance(0.05)) headers['x-vendor-api-version'] = dice.pick(['2022-11-28', '2026-03-10', '', 'x', '2022-11-28\u00ff', '__proto__']);
  if (!plain && dice.chance(0.05)) headers['if-none-match'] = dice.pick(['*', 'W/"x"', '"', ',,,', 'x'.repeat(4000)]);
  if (!plain && dice.chance(0.05)) headers['if-modified-since'] = dice.pick(['Thu, 01 Jan 1970 00:00:00 GMT', 'garbage', '9999999999999']);
  if (!plain && dice.chance(0.05)) headers['x-forwarded-for'] = dice.pick(['1.2.3.4', '::1', 'garbage', '999.999.999.999', '']);
  if (!plain && dice.chance(0.03)) headers.accept = dice.pick(['*/*', 'text/html', 'application/vnd.vendor.raw+json', '']);

  let body: string | undefined;
  if (operation.body || (!plain && dice.chance(0.1))) {
    if (!plain && dice.chance(0.12)) body = dice.pick(HOSTILE_BODIES);
    else {
      let value = generate(dice, operation.body, 'body', setup.fixtures);
      const mutations = hostility < 0.3 ? 0 : dice.int(1, 3);
      for (let i = 0; i < mutations; i++) value = mutate(dice, value);
      body = JSON.stringify(value) ?? '';
    }
    headers['content-type'] = plain || dice.chance(0.9) ? 'application/json' : dice.pick(['text/plain', 'application/x-www-form-urlencoded', 'application/json; charset=latin1', '']);
  }
  return { operation: operation.id, method: operation.method, path: `${operation.admin ? '' : '/api/v3'}${path}${query.length ? `?${query.join('&')}` : ''}`, headers, body };
}

/** A fresh connection for a retry (never a pooled socket that may be stale too). */
const NO_AGENT = new http.Agent({ keepAlive: false });
let resetsRetried = 0;

function send(base: URL, agent: http.Agent, request: FuzzRequest, timeoutMs: number, retry = true): Promise<{ status: number | string; text: string }> {
  return new Promise((resolve) => {
    let settled = false;
    const done = (status: number | string, text = '') => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve({ status, text });
    };
    const headers: Record<string, string | number> = { ...request.headers };
    const payload = request.body === undefined ? undefined : Buffer.from(request.body);
    if (payload) headers['content-length'] = payload.length;
    let req: http.ClientRequest;
    try {
      // Node's parser answers an oversized request line or headers (431) and closes the connection
      // as the client may still be writing: such a request gets a connection of its own.
      const oversized = request.path.length + Object.values(request.headers).reduce((n, v) => n + v.length, 0) > 12_000;
      req = http.request({ host: base.hostname, port: base.port, method: request.method, path: request.path, headers, agent: oversized ? NO_AGENT : agent });
    } catch (error) {
      // The client refused to send it (an invalid header character): not the server's answer.
      resolve({ status: `client:${(error as NodeJS.ErrnoException).code ?? 'error'}`, text: '' });
      return;
    }
    const timer = setTimeout(() => {
      req.destroy();
      done('hang');
    }, timeoutMs);
    req.on('response', (response) => {
      const chunks: Buffer[] = [];
      let size = 0;
      response.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size < 20_000) chunks.push(chunk);
      });
      response.on('end', () => done(response.statusCode ?? 0, Buffer.concat(chunks).toString('utf8')));
      response.on('error', () => done('reset'));
    });
    req.on('error', (error: NodeJS.ErrnoException) => {
      // A connection reset before the answer was read: a kept-alive socket the server closed as this
      // request went out (Node's documented race), or an early error answer while the body was still
      // being written. Sent once more on a fresh connection; a reset that repeats is a failure.
      if (retry && (error.code === 'ECONNRESET' || error.code === 'EPIPE')) {
        settled = true;
        clearTimeout(timer);
        resetsRetried++;
        resolve(send(base, NO_AGENT, request, timeoutMs, false));
        return;
      }
      done(`error:${error.code ?? error.message}`);
    });
    req.end(payload);
  });
}

/** A curl line that replays the request (the body, when present, is in a file next to it). */
export function replayCommand(baseUrl: string, request: FuzzRequest): string {
  const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
  const headers = Object.entries(request.headers).map(([k, v]) => `-H ${quote(`${k}: ${v}`)}`).join(' ');
  const body = request.body === undefined ? '' : ` --data-binary ${quote(request.body.length > 2000 ? `${request.body.slice(0, 2000)}…(${request.body.length} chars)` : request.body)}`;
  return `curl -sS -X ${request.method} ${headers}${body} ${quote(baseUrl + request.path)}`;
}

export function describeFailure(baseUrl: string, failure: FuzzFailure): string {
  const { request } = failure;
  return [
    `${failure.outcome} from ${request.operation}`,
    `  ${request.method} ${request.path.length > 2000 ? `${request.path.slice(0, 2000)}…` : request.path}`,
    `  headers: ${JSON.stringify(request.headers).slice(0, 2000)}`,
    `  body: ${request.body === undefined ? '(none)' : JSON.stringify(request.body.slice(0, 2000))}${(request.body?.length ?? 0) > 2000 ? ` …(${request.body!.length} chars)` : ''}`,
    `  response: ${(failure.response ?? '').slice(0, 500)}`,
    `  replay: ${replayCommand(baseUrl, request).slice(0, 4000)}`,
  ].join('\n');
}

/** What the fuzzer sent last, also while it runs (scripts/fuzz.ts prints it if the process is about to end). */
export const journal = { recent: [] as Sent[], inFlight: new Map<number, { request: FuzzRequest; started: number }>(), started: Date.now() };
const RECENT = 100;

export function inFlightNow(): Sent[] {
  const now = Date.now();
  return [...journal.inFlight.values()].map(({ request, started }) => ({ request, startedMs: started - journal.started, ms: now - started, outcome: 'in flight' }));
}

export function describeSent(baseUrl: string, sent: Sent): string {
  return `  +${(sent.startedMs / 1000).toFixed(1)} s ${sent.outcome} after ${sent.ms} ms: ${replayCommand(baseUrl, sent.request).slice(0, 600)}`;
}

export function describeWedge(baseUrl: string, wedge: Wedge): string {
  return [
    `WEDGE: ${wedge.reason}; /healthz: ${wedge.healthz}`,
    `in flight (${wedge.inFlight.length}):`,
    ...wedge.inFlight.map((sent) => describeSent(baseUrl, sent)),
    `the last ${wedge.recent.length} requests that ended, oldest first:`,
    ...wedge.recent.map((sent) => describeSent(baseUrl, sent)),
  ].join('\n');
}

/** The drain waits its timeout_seconds for jobs no worker here runs: a fuzzed wait is kept to 2 s. */
function shortDrain(request: FuzzRequest): FuzzRequest {
  if (request.operation !== 'POST /_admin/jobs/drain' || request.body === undefined) return request;
  try {
    const body = JSON.parse(request.body);
    const wait = body && typeof body === 'object' && !Array.isArray(body) ? body.timeout_seconds : null;
    // Left out, it is 30 s; a number the route takes, up to 600.
    if (wait === undefined || (typeof wait === 'number' && wait > 2 && wait <= 600)) {
      return { ...request, body: JSON.stringify({ ...body, timeout_seconds: 2 }) };
    }
  } catch {
    // not JSON: sent as it is
  }
  return request;
}

/** A 5xx an operation documents, not a failure: the drain's 504 while jobs wait (no worker runs them here). */
function documented(request: FuzzRequest, status: number, text: string): boolean {
  return request.operation === 'POST /_admin/jobs/drain' && status === 504 && text.includes('Background jobs are still waiting');
}

/**
 * Sends the probes (every operation × every credential, plausible values; the admin operations
 * last), then `requests` seeded random ones, round-robin over the operations so that every operation
 * is covered however small the budget; some are sent 2 to 4 times at once (a race). Stops early at a
 * wedge (the server stopped answering: `report.wedge`, with the requests in flight and the last ones)
 * or at `maxSeconds`.
 */
export async function fuzz(server: TestServer, options: FuzzOptions): Promise<FuzzReport> {
  const started = Date.now();
  journal.started = started;
  journal.recent = [];
  journal.inFlight.clear();
  const setup = await prepare(server);
  const base = new URL(server.url);
  const concurrency = options.concurrency ?? 4;
  const timeoutMs = options.timeoutMs ?? 15_000;
  const wedgeMs = (options.wedgeSeconds ?? 30) * 1000;
  const deadline = options.maxSeconds === undefined ? Infinity : started + options.maxSeconds * 1000;
  // Room for the races' copies, sent at once.
  const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency * 4 });
  const report: FuzzReport = {
    requests: 0, operations: setup.operations.length, covered: 0, statuses: {}, failures: [], resetsRetried: 0, seconds: 0,
    raced: 0, restores: 0, stoppedAtDeadline: false, wedge: null, adminStatuses: {},
  };
  resetsRetried = 0;
  const covered = new Set<string>();
  let issued = 0;
  let lastRefresh = Date.now();
  let refreshing: Promise<void> | null = null;
  let sequence = 0;
  const stopped = () => report.wedge !== null || Date.now() > deadline;

  const tracked = async (request: FuzzRequest, wait = timeoutMs) => {
    const id = sequence++;
    const at = Date.now();
    journal.inFlight.set(id, { request, started: at });
    try {
      const answer = await send(base, agent, request, wait);
      journal.recent.push({ request, startedMs: at - started, ms: Date.now() - at, outcome: answer.status });
      if (journal.recent.length > RECENT) journal.recent.shift();
      return answer;
    } finally {
      journal.inFlight.delete(id);
    }
  };

  const wedged = async (reason: string) => {
    if (report.wedge) return;
    const inFlight = inFlightNow();
    const recent = [...journal.recent];
    const healthz = (await send(base, NO_AGENT, { operation: 'GET /healthz', method: 'GET', path: '/healthz', headers: {} }, 5_000, false)).status;
    if (report.wedge) return;
    report.wedge = { reason, healthz, inFlight, recent };
  };
  const watchdog = setInterval(() => {
    const late = inFlightNow().filter((sent) => sent.ms > wedgeMs);
    if (late.length) void wedged(`${late.length} request(s) in flight for over ${wedgeMs / 1000} s`);
  }, 1000);
  watchdog.unref();

  const refresh = () => {
    if (!refreshing) {
      lastRefresh = Date.now();
      refreshing = setup.refresh().catch(() => undefined).finally(() => (refreshing = null));
    }
    return refreshing;
  };
  // The fuzzer's own snapshot back (one at a time): after a reset, a restore, and every RESTORE_EVERY requests.
  let restoring: Promise<void> | null = null;
  const restore = () => {
    restoring ??= (async () => {
      const request: FuzzRequest = {
        operation: 'POST /_admin/snapshots/{name}/restore (the fuzzer\'s own)', method: 'POST', path: `/_admin/snapshots/${BASE_SNAPSHOT}/restore`,
        headers: { accept: 'application/json', authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' }, body: '{}',
      };
      const { status, text } = await tracked(request);
      report.restores++;
      if (status !== 200) report.failures.push({ request, outcome: status, response: text });
      else await refresh();
    })().finally(() => (restoring = null));
    return restoring;
  };

  const record = (operation: Operation, request: FuzzRequest, status: number | string, text: string) => {
    report.requests++;
    covered.add(operation.id);
    const key = String(status);
    report.statuses[key] = (report.statuses[key] ?? 0) + 1;
    if (operation.admin) {
      const statuses = (report.adminStatuses[operation.id] ??= {});
      statuses[key] = (statuses[key] ?? 0) + 1;
    }
    const clientSide = typeof status === 'string' && status.startsWith('client:');
    if ((typeof status === 'number' && status >= 500 && !documented(request, status, text)) || (typeof status === 'string' && !clientSide)) {
      report.failures.push({ request, outcome: status, response: text });
    }
    if (status === 'hang') {
      // The server may be stuck: /healthz silent too is a wedge.
      void send(base, NO_AGENT, { operation: 'GET /healthz', method: 'GET', path: '/healthz', headers: {} }, 5_000, false).then(({ status: health }) => {
        if (health !== 200) void wedged(`${request.operation} had no answer in ${timeoutMs / 1000} s and /healthz answered ${health}`);
      });
    }
    if (typeof status === 'number' && status < 300) {
      if (WHOLESALE.has(operation.id)) void restore();
      if (operation.id === 'POST /_admin/clock') void refresh();
    }
  };

  // Probe: every operation once with every credential and plausible values; the credentials that
  // get past authentication and the access rule are then used 70% of the time, so that hostile
  // values reach the handlers rather than stopping at a 401 or 403. The admin operations come last
  // (they delete and reset what the others need), and the fuzzer's snapshot is restored after them.
  const ordered = [...setup.operations.filter((operation) => !operation.admin), ...setup.operations.filter((operation) => operation.admin)];
  const probes = ordered.flatMap((operation) => (operation.admin ? setup.credentials.slice(0, 1) : setup.credentials).map((credential) => ({ operation, credential })));
  let next = 0;
  const prober = async () => {
    while (next < probes.length && !stopped()) {
      const { operation, credential } = probes[next]!;
      const request = shortDrain(makeRequest(new Dice(options.seed + next++), operation, setup, { credential }));
      const { status, text } = await tracked(request);
      record(operation, request, status, text);
      if (typeof status === 'number' && status !== 401 && status !== 403) {
        setup.accepted.set(operation.id, [...(setup.accepted.get(operation.id) ?? []), credential]);
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, prober));
  await restore();
  // The probes count toward the budget.
  const budget = Math.max(0, options.requests - report.requests);

  const worker = async () => {
    while (issued < budget && !stopped()) {
      const index = issued;
      if (Date.now() - lastRefresh > 60_000) void refresh();
      if (refreshing) await refreshing;
      if (restoring) await restoring;
      const operation = setup.operations[index % setup.operations.length]!;
      // One die per request: request n of a seed is the same whatever the concurrency and timing.
      const request = shortDrain(makeRequest(new Dice(Math.imul(options.seed, 0x9e3779b1) ^ index), operation, setup));
      // And one for whether it races (2 to 4 copies at once), apart, so that the requests stay the same.
      const race = new Dice((Math.imul(options.seed, 0x85ebca6b) ^ index) + 1);
      const copies = race.chance(0.06) ? race.int(2, 4) : 1;
      issued += copies;
      if (copies > 1) report.raced += copies;
      const answers = await Promise.all(Array.from({ length: copies }, () => tracked(request)));
      for (const { status, text } of answers) {
        record(operation, request, status, text);
        if (options.progress && report.requests % (options.progressEvery ?? 5000) === 0) options.progress(report.requests, report);
      }
      if (Math.floor((index + copies) / RESTORE_EVERY) > Math.floor(index / RESTORE_EVERY)) void restore();
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  clearInterval(watchdog);
  if (!report.wedge && restoring) await restoring;
  agent.destroy();
  report.stoppedAtDeadline = !report.wedge && issued < budget;
  report.covered = covered.size;
  report.resetsRetried = resetsRetried;
  report.seconds = (Date.now() - started) / 1000;
  return report;
}
