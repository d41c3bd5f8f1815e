// What the tests that kill `codehost serve` (SIGKILL) and start it again on the same data share: one
// test database for the file, the server of the moment (killed, and the database dropped, after the
// file), a kill amid requests in flight, and a look at the database the kill left.
import { after, before } from 'node:test';
import { openDatabase, type Executor } from '../../src/db/index.ts';
import { createTestDatabase, type TestDatabase } from './database.ts';
import { startServe, type ServeChild } from './process.ts';

export interface KilledServers {
  /** The file's test database (once `before` has run). */
  readonly database: TestDatabase;
  /** The server started last (null before the first start). */
  readonly current: ServeChild | null;
  /** Starts `codehost serve` on the database (the one before must be dead) and waits until it answers. */
  start(): Promise<ServeChild>;
  /** The database opened directly (one connection) for `look`, closed after it. */
  inspect<T>(look: (db: Executor) => Promise<T>): Promise<T>;
}

/** Registers the file's `before` (a test database) and `after` (the last server killed, the database dropped). */
export function killedServers(adminToken: string): KilledServers {
  let database: TestDatabase | undefined;
  let current: ServeChild | null = null;
  before(async () => {
    database = await createTestDatabase();
  });
  after(async () => {
    await current?.kill();
    await database?.drop();
  });
  return {
    get database() {
      if (!database) throw new Error('the test database is made in before()');
      return database;
    },
    get current() {
      return current;
    },
    async start() {
      current = await startServe(this.database, adminToken);
      return current;
    },
    async inspect(look) {
      const db = openDatabase({ databaseUrl: this.database.databaseUrl, sqlitePath: `${this.database.dataDir}/codehost.db`, poolSize: 1 });
      try {
        return await look(db.kysely);
      } finally {
        await db.close();
      }
    },
  };
}

/**
 * Sends every request at once and kills the server (SIGKILL) at a random moment up to `withinMs`
 * after the first answer; answers each request's status, or `cut` where the kill cut it.
 */
export async function killAmid(server: ServeChild, requests: ReadonlyArray<() => Promise<Response>>, withinMs: number): Promise<Array<number | 'cut'>> {
  let answered!: () => void;
  const firstAnswer = new Promise<void>((resolve) => (answered = resolve));
  const statuses = requests.map((send) => send().then((r) => (answered(), r.status)).catch(() => 'cut' as const));
  await firstAnswer;
  await new Promise((resolve) => setTimeout(resolve, Math.random() * withinMs));
  await server.kill();
  return Promise.all(statuses);
}
