// Whether DATABASE_URL leads to a pooler that hands each transaction (or statement) of a client any
// of its server connections: PgBouncer in transaction or statement mode, and poolers like it. Through
// one, named prepared statements and LISTEN break (requests answer 500 and 504) unless
// CODEHOST_DATABASE_POOLER=transaction; `serve` looks once at its start (src/main.ts).
//
// The probe opens two connections, A and B, and runs separate statements on them in turn, each its
// own transaction, A first setting a session variable. It reports a pooler only on what a direct
// connection (or a session pooler, which keeps a server connection per client) can never show:
//  - A's statements answered by two different backends (pg_backend_pid()): one PostgreSQL
//    connection is one backend for its whole life;
//  - A's session variable gone at a later statement of A: a session keeps its settings;
//  - A and B, both open, answered by one backend: two live sessions never share one.
// So a direct connection is never misjudged. A transaction pooler shows at least one of them at once
// whichever server connection it picks: picking the one A released last (PgBouncer's default, LIFO)
// gives B A's backend; another one changes A's backend between two statements of A; one server
// connection for all gives B A's backend. A few rounds cover a pooler that picks at random.
import pg from 'pg';

const ROUNDS = 4;

export interface PoolerProbeOptions {
  /** How long each probe connection may take to open (CODEHOST_DATABASE_CONNECT_TIMEOUT_MS). */
  connectTimeoutMs?: number;
}

/**
 * What shows that `url` leads to a transaction pooler, in a few words ("two connections were
 * answered by one backend, 1234"), or null when nothing does (a direct connection, a session pooler).
 */
export async function transactionPoolerEvidence(url: string, options: PoolerProbeOptions = {}): Promise<string | null> {
  const open = async () => {
    const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: options.connectTimeoutMs ?? 5_000, application_name: 'codehost pooler probe' });
    // A connection lost during the probe rejects its query; the client's own 'error' is heard here.
    client.on('error', () => {});
    try {
      await client.connect();
    } catch (error) {
      await client.end().catch(() => undefined);
      throw error;
    }
    return client;
  };
  const [a, b] = await Promise.allSettled([open(), open()]);
  try {
    if (a.status === 'rejected') throw a.reason;
    if (b.status === 'rejected') throw b.reason;
    return await probe(a.value, b.value);
  } finally {
    for (const client of [a, b]) if (client.status === 'fulfilled') await client.value.end().catch(() => undefined);
  }
}

async function probe(a: pg.Client, b: pg.Client): Promise<string | null> {
  const token = `t${process.pid}-${Date.now()}-${Math.random().toString(36).slice(2)}`;
  const backends = { a: new Set<number>(), b: new Set<number>() };
  const first = await a.query<{ pid: number }>("select pg_backend_pid() as pid, set_config('codehost.pooler_probe', $1, false)", [token]);
  backends.a.add(Number(first.rows[0]!.pid));
  // A then B, then A twice (one after the other), then B: each answer a statement of its own.
  for (let round = 0; round < ROUNDS; round++) {
    for (const client of ['b', 'a', 'a', 'b'] as const) {
      const { rows } = await (client === 'a' ? a : b).query<{ pid: number; token: string | null }>(
        "select pg_backend_pid() as pid, current_setting('codehost.pooler_probe', true) as token",
      );
      const pid = Number(rows[0]!.pid);
      if (client === 'a' && rows[0]!.token !== token) return 'a session setting was gone at the connection\'s next statement';
      backends[client].add(pid);
      const other = backends[client === 'a' ? 'b' : 'a'];
      if (other.has(pid)) return `two connections, both open, were answered by one backend (${pid})`;
      if (backends[client].size > 1) return `one connection was answered by two backends (${[...backends[client]].join(', ')})`;
    }
  }
  return null;
}

/**
 * Whether every migration of `names` is recorded in the database (through any connection, a pooler
 * too: one statement, no lock), for a start that must not migrate there.
 */
export async function migrationsRecorded(url: string, names: readonly string[], options: PoolerProbeOptions = {}): Promise<boolean> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: options.connectTimeoutMs ?? 5_000 });
  client.on('error', () => {});
  try {
    await client.connect();
    const table = await client.query<{ present: boolean }>("select to_regclass('kysely_migration') is not null as present");
    if (!table.rows[0]!.present) return false;
    const recorded = new Set((await client.query<{ name: string }>('select name from kysely_migration')).rows.map((row) => row.name));
    return names.every((name) => recorded.has(name));
  } finally {
    await client.end().catch(() => undefined);
  }
}
