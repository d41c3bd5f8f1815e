// A fresh database per test file: a temporary SQLite file, or, when DATABASE_URL is set, a new
// PostgreSQL database on that server, dropped afterwards.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import pg from 'pg';

export interface TestDatabase {
  /** DATABASE_URL for the server under test, or null for SQLite. */
  databaseUrl: string | null;
  /** A directory for CODEHOST_DATA_DIR (the SQLite file lives in it). */
  dataDir: string;
  drop(): Promise<void>;
}

export async function createTestDatabase(): Promise<TestDatabase> {
  const dataDir = mkdtempSync(join(tmpdir(), 'codehost-test-'));
  const base = process.env.DATABASE_URL;
  if (!base) {
    return { databaseUrl: null, dataDir, drop: async () => rmSync(dataDir, { recursive: true, force: true }) };
  }
  const name = `codehost_test_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: base });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(base);
  url.pathname = `/${name}`;
  return {
    databaseUrl: url.toString(),
    dataDir,
    drop: async () => {
      const client = new pg.Client({ connectionString: base });
      await client.connect();
      await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await client.end();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export const engine = process.env.DATABASE_URL ? 'postgres' : 'sqlite';
