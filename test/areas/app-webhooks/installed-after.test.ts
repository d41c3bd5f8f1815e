// An event goes to the apps installed when it happened, as on the platform: an app installed after
// an event, before the event's fan-out ran (a busy queue, several processes), gets no delivery of
// it. The fan-out's targeting is called on the stored row after the later installation, so the
// order that a queue makes by chance is made here on purpose.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { installedOver, toCoveringInstallations } from '../../../src/areas/app-webhooks/engine.ts';
import type { Activity } from '../../../src/core/activities.ts';
import { startServer, type TestServer } from '../../helpers/server.ts';

describe('an event is delivered to the installations it happened under', () => {
  let server: TestServer;
  let early: { id: number };
  let activity: Activity;

  before(async () => {
    server = await startServer();
    await server.admin('POST', '/users', { login: 'mona' });
    await server.admin('POST', '/repos', { owner: 'mona', name: 'widgets' });
    const hook = { url: 'http://127.0.0.1:9/hook' };
    early = await server.admin('POST', '/apps', { slug: 'early', permissions: { contents: 'read' }, events: ['push'], webhook: hook });
    await server.admin('POST', '/apps', { slug: 'late', permissions: { contents: 'read' }, events: ['push'], webhook: hook });
    await server.admin('POST', '/apps/early/installations', { account: 'mona' });
    await server.drain();
    await server.admin('POST', '/events', { event: 'push', repository: 'mona/widgets' });
    const db = server.server.ctx.db.kysely;
    const row = await db.selectFrom('activity_outbox').selectAll().where('event', '=', 'push').orderBy('id', 'desc').executeTakeFirstOrThrow();
    // One millisecond later at least: the installation comes after the event.
    await new Promise((resolve) => setTimeout(resolve, 5));
    await server.admin('POST', '/apps/late/installations', { account: 'mona' });
    activity = { ...row, payload: JSON.parse(row.payload) } as Activity;
  });
  after(() => server.close());

  test('the app installed before it is a target; the app installed after it is not', async () => {
    const targets = await installedOver.targets(server.server.ctx.db.kysely, activity);
    assert.deepEqual(targets.map((target) => target.app_id), [early.id]);
  });

  test('the same for an account\'s event and for the installations a deleted repository had', async () => {
    const onAccount = { ...activity, repository_id: null, account_id: (await server.server.ctx.db.kysely.selectFrom('users').select('id').where('login', '=', 'mona').executeTakeFirstOrThrow()).id } as Activity;
    assert.deepEqual((await installedOver.targets(server.server.ctx.db.kysely, onAccount)).map((target) => target.app_id), [early.id]);
    const installations = await server.server.ctx.db.kysely.selectFrom('installations').select('id').execute();
    const deleted = { ...onAccount, payload: { ...onAccount.payload as object, installation_ids: installations.map((i) => i.id) } } as Activity;
    assert.deepEqual((await toCoveringInstallations.targets(server.server.ctx.db.kysely, deleted)).map((target) => target.app_id), [early.id]);
  });
});
