// Boots the real server on a real port with a fresh database (SQLite, or PostgreSQL when
// DATABASE_URL is set) and gives tests an HTTP client for the public and admin APIs.
import { createServer, type Server } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { createTestDatabase, type TestDatabase } from './database.ts';
import { freePort } from './process.ts';

export const ADMIN_TOKEN = 'test-admin-token';

export interface Response<T = any> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

export interface RequestOptions {
  token?: string;
  /** A raw Authorization header (Basic, a JWT, or something malformed). */
  authorization?: string;
  body?: unknown;
  /** Sent as is, not JSON-encoded. */
  rawBody?: string;
  headers?: Record<string, string>;
}

export interface TestServer {
  /** http://127.0.0.1:PORT */
  url: string;
  /** The public API under /api/v3. */
  apiUrl: string;
  server: Server;
  api<T = any>(method: string, path: string, options?: RequestOptions): Promise<Response<T>>;
  /** Calls /_admin with the admin token; throws unless the answer is 2xx. */
  admin<T = any>(method: string, path: string, body?: unknown): Promise<T>;
  /** Calls /_admin and returns the whole response, whatever its status. */
  adminRaw<T = any>(method: string, path: string, body?: unknown): Promise<Response<T>>;
  /** Runs every queued background job (POST /_admin/jobs/drain). */
  drain(): Promise<void>;
  /** Moves the test clock forward. */
  advance(seconds: number): Promise<void>;
  close(): Promise<void>;
}

async function call(url: string, method: string, options: RequestOptions = {}): Promise<Response> {
  const headers: Record<string, string> = { accept: 'application/vnd.vendor+json', ...options.headers };
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  if (options.authorization) headers.authorization = options.authorization;
  let body: string | undefined;
  if (options.rawBody !== undefined) body = options.rawBody;
  else if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    headers['content-type'] ??= 'application/json';
  }
  const response = await fetch(url, { method, headers, body, redirect: 'manual' });
  const text = await response.text();
  let parsed: unknown = undefined;
  if (text && (response.headers.get('content-type') ?? '').includes('json')) parsed = JSON.parse(text);
  return { status: response.status, headers: response.headers, body: parsed, text };
}

/**
 * Starts a server; `env` overrides settings (CODEHOST_* names). With `database`, the server uses that
 * one (another server's, say an API process beside a worker process) and leaves it in place on close.
 */
export async function startServer(env: Record<string, string> = {}, options: { database?: TestDatabase } = {}): Promise<TestServer> {
  const database = options.database ?? (await createTestDatabase());
  const port = await freePort();
  const config = loadConfig({
    CODEHOST_PORT: String(port),
    CODEHOST_HOST: '127.0.0.1',
    CODEHOST_DATA_DIR: database.dataDir,
    CODEHOST_ADMIN_TOKEN: ADMIN_TOKEN,
    CODEHOST_DEMO: '0',
    CODEHOST_TEST_CLOCK: '1',
    CODEHOST_LOG_LEVEL: process.env.CODEHOST_TEST_LOG_LEVEL ?? 'silent',
    CODEHOST_JOB_POLL_MS: '20',
    CODEHOST_DATABASE_POOL_SIZE: '4',
    ...(database.databaseUrl ? { DATABASE_URL: database.databaseUrl } : {}),
    ...env,
  });
  const server = await createServer(config);
  const url = await server.listen();
  const adminRaw = (method: string, path: string, body?: unknown) =>
    call(`${url}/_admin${path}`, method, { token: ADMIN_TOKEN, body: body ?? (method === 'GET' ? undefined : {}) });
  const admin = async (method: string, path: string, body?: unknown) => {
    const response = await adminRaw(method, path, body);
    if (response.status >= 300) throw new Error(`admin ${method} ${path} answered ${response.status}: ${response.text}`);
    return response.body;
  };
  return {
    url,
    apiUrl: `${url}/api/v3`,
    server,
    api: (method, path, options) => call(`${url}/api/v3${path}`, method, options),
    admin,
    adminRaw,
    drain: async () => {
      await admin('POST', '/jobs/drain', { timeout_seconds: 60 });
    },
    advance: async (seconds) => {
      await admin('POST', '/clock', { advance_seconds: seconds });
    },
    close: async () => {
      await server.close();
      if (!options.database) await database.drop();
    },
  };
}

/** The URLs of a `Link` header by their rel (`next`, `last`, …). */
export function links(header: string | null): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of (header ?? '').split(',').filter(Boolean)) {
    const match = /<([^>]+)>;\s*rel="([^"]+)"/.exec(part.trim());
    if (match) out[match[2]!] = match[1]!;
  }
  return out;
}
