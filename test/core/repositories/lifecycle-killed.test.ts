// Durability of the repository and installation lifecycle: `codehost serve` is killed with SIGKILL
// at random moments while repository deletions, renames, transfers and archivals and installation
// deletions and suspensions are under way. After each round the database holds, for each, the before
// or the after with its activity queued, never half: a deleted repository has no issue or thread left
// and its `repository.deleted` is in the outbox; a renamed one has its former name recorded; an
// installation is there with its token or gone with it. Rounds on the same database, each a new process.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { signAppJwt, type TestApp } from '../../helpers/credentials.ts';
import { killAmid, killedServers } from '../../helpers/killed.ts';
import type { ServeChild } from '../../helpers/process.ts';

const ADMIN_TOKEN = 'killed-admin-token-0123456789';
const EACH = 5;
const ROUNDS = 4;
const APPS = 6;

const servers = killedServers(ADMIN_TOKEN);

interface Installed { slug: string; id: number; jwt: string; suspend: boolean }

test('repository and installation lifecycle killed at any moment leaves the before or the after, never half', async (t) => {
  const first = await servers.start();
  await first.admin('POST', '/users', { login: 'boss' });
  await first.admin('POST', '/orgs', { login: 'acme', owners: ['boss'] });
  await first.admin('POST', '/orgs', { login: 'other', owners: ['boss'] });
  await first.admin('POST', '/users', { login: 'mona' });
  await first.admin('PUT', '/orgs/acme/members/mona', { role: 'member' });
  // Deliveries go to a closed loopback port: they fail, which is all this test needs of them.
  await first.admin('POST', '/apps', { slug: 'watcher', permissions: { metadata: 'read', issues: 'read' }, events: ['issues', 'repository'], webhook: { url: 'http://127.0.0.1:9/hook' } });
  await first.admin('POST', '/apps/watcher/installations', { account: 'acme' });
  const kinds = ['del', 'ren', 'tra', 'arc'] as const;
  const names = kinds.flatMap((kind) => Array.from({ length: EACH }, (_, i) => `${kind}${i}`));
  for (const name of names) {
    await first.admin('POST', '/repos', { owner: 'acme', name });
    await first.admin('PUT', `/repos/acme/${name}/subscription`, { login: 'mona', subscribed: true });
    await first.admin('POST', `/repos/acme/${name}/issues`, { author: 'boss', title: `in ${name}` });
  }
  const installed: Installed[] = [];
  for (let i = 0; i < APPS; i++) {
    const app: TestApp = await first.admin('POST', '/apps', { slug: `app${i}`, permissions: { metadata: 'read' }, webhook: { url: 'http://127.0.0.1:9/hook' } });
    const { id } = await first.admin('POST', `/apps/app${i}/installations`, { account: 'acme' });
    const jwt = await signAppJwt(app);
    const minted = await fetch(`${first.url}/app/installations/${id}/access_tokens`, { method: 'POST', headers: { authorization: `Bearer ${jwt}` } });
    assert.equal(minted.status, 201, await minted.text());
    installed.push({ slug: `app${i}`, id, jwt, suspend: i % 2 === 1 });
  }
  const ids = new Map<string, number>();
  await servers.inspect(async (q) => {
    for (const row of await q.selectFrom('repositories').select(['id', 'name']).execute()) ids.set(row.name, row.id);
    t.diagnostic(`notification threads before the first kill: ${(await q.selectFrom('notification_threads').select('id').execute()).length}`);
  });

  const platform = (current: ServeChild, method: string, path: string, jwt: string) =>
    fetch(`${current.url}${path}`, { method, headers: { authorization: `Bearer ${jwt}` } });
  const operation = (current: ServeChild, name: string): Promise<Response> => {
    if (name.startsWith('del')) return current.call('DELETE', `/repos/acme/${name}`);
    if (name.startsWith('ren')) return current.call('PATCH', `/repos/acme/${name}`, { name: `renamed-${name}` });
    if (name.startsWith('tra')) return current.call('PATCH', `/repos/acme/${name}`, { owner: 'other' });
    if (name.startsWith('arc')) return current.call('PATCH', `/repos/acme/${name}`, { archived: true });
    const one = installed.find((i) => i.slug === name)!;
    return one.suspend ? platform(current, 'PUT', `/app/installations/${one.id}/suspended`, one.jwt) : platform(current, 'DELETE', `/app/installations/${one.id}`, one.jwt);
  };

  let remaining = [...names, ...installed.map((i) => i.slug)];
  for (let round = 0; round < ROUNDS && remaining.length; round++) {
    const current = round === 0 ? first : await servers.start();
    await killAmid(current, remaining.map((name) => () => operation(current, name)), 200);

    await servers.inspect(async (q) => {
      const activities = async (name: string) => (await q.selectFrom('activity_outbox').select('id').where('name', '=', name).execute()).length;
      const [acme, other] = await Promise.all(['acme', 'other'].map(async (login) => (await q.selectFrom('users').select('id').where('login', '=', login).executeTakeFirstOrThrow()).id));
      const done = new Set<string>();
      const count = { deleted: 0, renamed: 0, transferred: 0, archived: 0, uninstalled: 0, suspended: 0 };
      for (const name of names) {
        const id = ids.get(name)!;
        const repository = await q.selectFrom('repositories').select(['name', 'owner_id', 'archived']).where('id', '=', id).executeTakeFirst();
        const issues = (await q.selectFrom('issues').select('id').where('title', '=', `in ${name}`).execute()).length;
        const threads = (await q.selectFrom('notification_threads').select('id').where('repository_id', '=', id).execute()).length;
        const formerNames = (await q.selectFrom('repository_former_names').select('repository_id').where('repository_id', '=', id).execute()).length;
        if (name.startsWith('del')) {
          if (repository) assert.equal(issues, 1, `${name}: the before, whole`);
          else {
            assert.deepEqual([issues, threads], [0, 0], `${name}: the after, whole (no issue, no thread)`);
            count.deleted++;
            done.add(name);
          }
          continue;
        }
        assert.ok(repository, `${name} is there`);
        assert.equal(issues, 1, `${name}: its issue follows it`);
        if (name.startsWith('ren')) {
          const renamed = repository.name === `renamed-${name}`;
          assert.ok(renamed || repository.name === name, `${name}: one of the two names (${repository.name})`);
          assert.equal(formerNames, renamed ? 1 : 0, `${name}: the former name recorded with the rename`);
          if (renamed) (count.renamed++, done.add(name));
        } else if (name.startsWith('tra')) {
          const moved = repository.owner_id === other;
          assert.ok(moved || repository.owner_id === acme, `${name}: one of the two owners`);
          assert.equal(formerNames, moved ? 1 : 0, `${name}: the former place recorded with the transfer`);
          if (moved) (count.transferred++, done.add(name));
        } else if (Number(repository.archived)) (count.archived++, done.add(name));
      }
      for (const one of installed) {
        const installation = await q.selectFrom('installations').select(['id', 'suspended_at']).where('id', '=', one.id).executeTakeFirst();
        const tokens = (await q.selectFrom('tokens').select('id').where('installation_id', '=', one.id).execute()).length;
        if (one.suspend) {
          assert.ok(installation, `${one.slug}: suspended, not gone`);
          assert.equal(tokens, 1, `${one.slug}: its token stays (refused while suspended)`);
          if (installation.suspended_at !== null) (count.suspended++, done.add(one.slug));
        } else if (installation) assert.equal(tokens, 1, `${one.slug}: the before, whole`);
        else {
          assert.equal(tokens, 0, `${one.slug}: the after, whole (its tokens gone with it)`);
          count.uninstalled++;
          done.add(one.slug);
        }
      }
      // Each change that committed has its activity, and no activity outlived a change that did not.
      assert.deepEqual(
        [await activities('repository.deleted'), await activities('repository.renamed'), await activities('repository.transferred'), await activities('repository.archived'), await activities('installation.deleted'), await activities('installation.suspend')],
        [count.deleted, count.renamed, count.transferred, count.archived, count.uninstalled, count.suspended],
        'one activity per committed change (deleted, renamed, transferred, archived, uninstalled, suspended)',
      );
      t.diagnostic(`round ${round}: ${remaining.filter((name) => done.has(name)).length} of ${remaining.length} done before the kill`);
      remaining = remaining.filter((name) => !done.has(name));
    });
  }
  // A last process finishes what is left: each state a kill left is one the operation goes on from.
  if (remaining.length) {
    const last = await servers.start();
    for (const name of remaining) {
      const response = await operation(last, name);
      assert.ok([200, 204].includes(response.status), `${name}: ${response.status} ${await response.text()}`);
    }
  }
  await servers.current!.kill();
});
