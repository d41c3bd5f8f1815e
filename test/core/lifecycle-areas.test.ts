// Every area × every lifecycle activity (src/core/area.ts `lifecycle`), as a table: each answer an
// area declares `handled` (or `handler`: a handler it declares for that activity; or `applied`: its handler of
// `repository.moving`, applied in the move's write) names the test that shows it (a file and the start of a
// test's title, which must be there), or says why no test shows it yet; each `unaffected` has no row. A new area, a new
// lifecycle activity, or an answer changed from `unaffected` to `handled` fails here until its row is
// written.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { AREAS } from '../../src/app.ts';
import { LIFECYCLE_ACTIVITIES, type LifecycleActivityName } from '../../src/core/area.ts';

type Row = { shown: `test/${string}.test.ts`; title: string } | { notYet: string };

const TRANSFERS = 'test/core/repositories/lifecycle-transfers.test.ts';
const REPOSITORIES = 'test/core/repositories/lifecycle-repositories.test.ts';
const ARCHIVED = 'test/core/repositories/lifecycle-archived.test.ts';
const USERS = 'test/core/accounts/lifecycle-users.test.ts';
const USER_DELETE = 'test/core/accounts/lifecycle-user-delete.test.ts';
const INSTALLATIONS = 'test/core/apps/lifecycle-installations.test.ts';
const DROPPED = 'test/core/apps/lifecycle-dropped-deliveries.test.ts';
const REPOSITORY_STATES = 'test/core/lifecycle-states-repositories.test.ts';
const USER_STATES = 'test/core/lifecycle-states-users.test.ts';

const suspendedUser: Row = { shown: USERS, title: 'every credential of theirs stops on its next request' };
const deletedUser: Row = { shown: USER_DELETE, title: 'the user and everything of theirs go' };
const cascade = (why: string): Row => ({ notYet: `a foreign key's cascade (${why}); no test of its own yet` });

const ROWS: Record<string, Partial<Record<LifecycleActivityName, Row>>> = {
  'app-tokens': {
    'repository.transferred': { shown: REPOSITORIES, title: 'a fine-grained token selecting it and an installation token narrowed to it stop' },
    'repository.deleted': cascade('installation selections'),
    'user.suspended': suspendedUser,
    'user.deleted': deletedUser,
    'installation.suspend': { shown: INSTALLATIONS, title: 'suspended: its tokens stop, none is minted' },
    'installation.deleted': { shown: INSTALLATIONS, title: 'deleted: its tokens are gone' },
  },
  'updater-access': {
    'repository.transferred': { shown: TRANSFERS, title: 'the old organization\'s list drops the moved repository' },
    'repository.deleted': cascade('updater_access_repositories'),
  },
  'code-security': {
    'repository.transferred': { shown: TRANSFERS, title: 'the old organization\'s configuration lets go of it' },
    'repository.deleted': cascade('attachments and license seats'),
    'repository.archived': { shown: ARCHIVED, title: 'attaching a code security configuration fails it' },
  },
  'assistant-metrics': {
    'user.deleted': cascade('an organization\'s metrics'),
  },
  'issue-types': {
    'repository.transferred': { shown: REPOSITORY_STATES, title: 'a transferred repository\'s issue types are its new owner\'s' },
    'repository.deleted': cascade('overrides'),
    'user.deleted': cascade('an organization\'s types'),
  },
  issues: {
    'repository.transferred': { shown: REPOSITORIES, title: 'a fine-grained token selecting it and an installation token narrowed to it stop' },
    'repository.renamed': { shown: REPOSITORIES, title: 'a rename: 200 at the new place' },
    'repository.deleted': { shown: REPOSITORIES, title: '204: the repository, its issues and its threads go' },
    'repository.archived': { shown: ARCHIVED, title: 'every write of its issues, pull requests and comments is a 403' },
    'user.suspended': suspendedUser,
    'user.deleted': deletedUser,
    'installation.suspend': { shown: INSTALLATIONS, title: 'suspended: its tokens stop, none is minted' },
    'installation.deleted': { shown: INSTALLATIONS, title: 'deleted: its tokens are gone' },
  },
  commits: {
    'repository.transferred': { notYet: 'statuses and check runs are the repository\'s rows, read by its id through its current owner; no test moves a repository that has them yet' },
    'repository.renamed': { notYet: 'their URLs are rendered from the repository\'s current name; no test renames a repository that has them yet' },
    'repository.deleted': { notYet: 'the rows cascade with the repository (migration 0025); no test deletes a repository that has them yet' },
    'repository.archived': { shown: 'test/core/commits/commits.test.ts', title: 'an archived repository refuses statuses and check runs' },
    'user.suspended': suspendedUser,
    'user.deleted': { notYet: 'reassignAuthorship gives a deleted user\'s statuses to ghost; no test deletes a user who made one yet' },
    'installation.suspend': { shown: INSTALLATIONS, title: 'suspended: its tokens stop, none is minted' },
    'installation.deleted': { shown: INSTALLATIONS, title: 'deleted: its tokens are gone' },
  },
  notifications: {
    'repository.transferred': { shown: TRANSFERS, title: 'the threads of who read it only through the old organization go' },
    'repository.renamed': { shown: REPOSITORIES, title: 'a rename: 200 at the new place' },
    'repository.deleted': { shown: REPOSITORIES, title: '204: the repository, its issues and its threads go' },
    'user.suspended': suspendedUser,
    'user.deleted': deletedUser,
  },
  'app-webhooks': {
    'repository.transferred': { shown: REPOSITORIES, title: 'a transfer: the new owner, the old organization\'s team grants go' },
    'repository.renamed': { shown: REPOSITORIES, title: 'a rename: 200 at the new place' },
    'repository.deleted': { shown: REPOSITORIES, title: 'apps subscribed to `repository` receive `deleted`' },
    'repository.archived': { shown: INSTALLATIONS, title: 'archiving and unarchiving are `archived` and `unarchived` events' },
    'user.deleted': { shown: USER_STATES, title: 'deleted: the installations on her account go with it, no app is sent anything for it' },
    'installation.suspend': { shown: DROPPED, title: 'suspended: the queued deliveries are dropped' },
    'installation.deleted': { shown: DROPPED, title: 'deleted: the queued deliveries are dropped' },
  },
  'user-migrations': {
    'repository.transferred': { shown: TRANSFERS, title: 'a repository locked by a migration cannot be moved' },
    'repository.renamed': { shown: TRANSFERS, title: 'a repository locked by a migration cannot be moved' },
    'repository.deleted': cascade('migration repositories'),
    'user.suspended': suspendedUser,
    'user.deleted': { shown: USER_DELETE, title: 'the user and everything of theirs go' },
  },
};

const sources = new Map<string, string>();
const source = (file: string) => sources.get(file) ?? sources.set(file, readFileSync(join(import.meta.dirname, '../..', file), 'utf8')).get(file)!;

for (const area of AREAS) {
  for (const name of LIFECYCLE_ACTIVITIES) {
    const answer = area.lifecycle[name];
    const row = ROWS[area.name]?.[name];
    test(`${area.name} × ${name}: ${'unaffected' in answer ? 'unaffected' : 'handled'}`, () => {
      if ('unaffected' in answer) {
        assert.equal(row, undefined, `${area.name} says it is unaffected by ${name}: no row`);
        return;
      }
      const how = 'handler' in answer ? answer.handler : 'applied' in answer ? answer.applied : answer.handled;
      assert.ok(row, `${area.name} handles ${name} (${how}): its row names the test that shows it, or why none does yet`);
      // An answer that its handler does it points at a handler the area declares for that name.
      if ('handler' in answer) assert.equal(typeof (area.handlers as Record<string, unknown> | undefined)?.[name], 'function', `${area.name} declares a handler of ${name}`);
      // One that the move's write applies points at the area's handler of `repository.moving`.
      if ('applied' in answer) assert.equal(typeof (area.handlers as Record<string, unknown> | undefined)?.['repository.moving'], 'function', `${area.name} declares a handler of repository.moving`);
      if ('notYet' in row) {
        assert.ok(row.notYet.trim());
        return;
      }
      const escaped = row.title.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/'/g, "\\\\?'");
      assert.match(source(row.shown), new RegExp(`test\\('${escaped}`), `${row.shown} has a test titled "${row.title}..."`);
    });
  }
}

test('no row for an area or an activity that is not there', () => {
  const names = new Set<string>(LIFECYCLE_ACTIVITIES);
  assert.deepEqual(Object.keys(ROWS).filter((name) => !AREAS.some((area) => area.name === name)), []);
  assert.deepEqual(Object.values(ROWS).flatMap((rows) => Object.keys(rows)).filter((name) => !names.has(name)), []);
});
