// Measures a snapshot, a reset and a restore of a large world on SQLite (or PostgreSQL with
// DATABASE_URL), and /healthz's slowest answer meanwhile, asked from another process.
// USERS, ISSUES, GIT (repositories with git data): the world's size.
//   GIT=500 node_modules/.bin/node scripts/measure-reset.ts
import { cpSync } from 'node:fs';
import { join } from 'node:path';
import { sql } from 'kysely';
import { slowestHealthz } from '../test/helpers/healthz.ts';
import { startServer } from '../test/helpers/server.ts';

const USERS = Number(process.env.USERS ?? 5000);
/** Repositories with git data (copies of one made by the API). */
const GIT = Number(process.env.GIT ?? 0);
const ISSUES = Number(process.env.ISSUES ?? 10000);
const server = await startServer({ CODEHOST_TEST_MODE: '1' });
const db = server.server.ctx.db.kysely;
await server.admin('POST', '/users', { login: 'owner' });
const repo = await server.admin('POST', '/repos', { owner: 'owner', name: 'big' });
const now = new Date().toISOString();
const t0 = performance.now();
await sql`with recursive n(i) as (select 1 union all select i + 1 from n where i < ${USERS})
  insert into users (login, login_lower, type, created_at, updated_at) select 'u' || i, 'u' || i, 'User', ${now}, ${now} from n`.execute(db);
await sql`with recursive n(i) as (select 1 union all select i + 1 from n where i < ${ISSUES})
  insert into issues (repository_id, number, author_id, title, state, created_at, updated_at) select ${repo.id}, i, 1 + (i % ${USERS}), 'issue ' || i, 'open', ${now}, ${now} from n`.execute(db);
await sql`insert into issue_numbers (repository_id, last_number) values (${repo.id}, ${ISSUES}) on conflict do nothing`.execute(db).catch(() => {});
const made = await server.admin('POST', '/repos', { owner: 'owner', name: 'with-git', init_git: true });
const gitRoot = join(server.server.ctx.config.dataDir, 'git');
for (let i = 0; i < GIT; i++) {
  const row = await sql<{ id: number }>`insert into repositories (owner_id, name, name_lower, visibility, default_branch, topics, security_and_analysis, created_at, updated_at)
    values (${repo.owner.id}, ${`g${i}`}, ${`g${i}`}, 'public', 'main', '[]', '{}', ${now}, ${now}) returning id`.execute(db);
  const id = row.rows[0]!.id;
  cpSync(join(gitRoot, `${made.id}.git`), join(gitRoot, `${id}.git`), { recursive: true });
  await sql`update repositories set git_path = ${`git/${id}.git`} where id = ${id}`.execute(db);
}
console.log(`world: ${GIT} repositories with git data, ${USERS} users, ${ISSUES} issues, built in ${Math.round(performance.now() - t0)} ms`);

/** Runs `run` while another process asks /healthz every 20 ms, and prints the time it took and /healthz's slowest answer meanwhile. */
async function timed(label: string, run: () => Promise<unknown>) {
  const { result, tookMs, slowestMs } = await slowestHealthz(server.url, run);
  console.log(`${label}: ${Math.round(tookMs)} ms; /healthz slowest answer meanwhile ${slowestMs} ms; ${JSON.stringify(result)}`);
}
await timed('snapshot', () => server.adminRaw('POST', '/snapshots', { name: 'big' }).then((r) => r.status));
await timed('reset to empty', () => server.adminRaw('POST', '/reset', {}).then((r) => r.status));
await timed('restore', () => server.adminRaw('POST', '/snapshots/big/restore', {}).then((r) => r.status));
await timed('reset to empty again', () => server.adminRaw('POST', '/reset', {}).then((r) => r.status));
await server.close();
