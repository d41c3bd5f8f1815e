// The page writer's repository cache: a page is written anew whenever any value a repository's JSON
// is made of changes (its row, its owner, its facts), and comes from the cache only when none did.
// Its pages kept by entity tag: the least recently used go first beyond the bytes kept.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { RepositoryWithFacts } from '../../core/repositories/facts.ts';
import { ThreadPageWriter } from './representations.ts';
import type { ThreadWithSubject } from './store.ts';

const urls = { api: 'https://api.example.test', web: 'https://example.test' };

function repository(changes: { repository?: object; owner?: object; facts?: object; version?: number } = {}): RepositoryWithFacts {
  return {
    repository: {
      id: 7, owner_id: 3, name: 'hello', name_lower: 'hello', description: 'first', visibility: 'public', language: null, topics: '[]',
      default_branch: 'main', git_path: null, locked_by_migration_id: null, security_and_analysis: '{}', created_at: '2026-01-01T00:00:00.000Z',
      updated_at: '2026-01-02T00:00:00.000Z', pushed_at: null, archived: 0, ...changes.repository,
    },
    owner: { id: 3, login: 'octo', type: 'User', site_admin: 0, ...changes.owner },
    facts: { open_issues: 1, subscribers: 2, stargazers: 0, forks: 0, ...changes.facts },
    version: changes.version ?? 1,
  } as RepositoryWithFacts;
}

const thread = (id: number): ThreadWithSubject => ({
  id, user_id: 3, subject_id: id, repository_id: 7, reason: 'subscribed', unread: 1, done: 0, updated_at: '2026-01-03T00:00:00.000Z',
  last_read_at: null, latest_comment_id: null, created_at: '2026-01-03T00:00:00.000Z', subject_type: 'Release', subject_title: `Release ${id}`,
  subject_url: `https://api.example.test/releases/${id}`, issue_number: null, is_pull_request: null,
});

const write = (writer: ThreadPageWriter, found: RepositoryWithFacts) => {
  const page = writer.write([thread(1), thread(2)], new Map([[7, found]]));
  const body = JSON.parse(page.body.toString()) as { repository: { description: string | null; owner: { login: string }; subscribers_count: number; topics: string[] } }[];
  return { ...page, body };
};

test('a repository comes from the cache only while every value it is made of stays the same', () => {
  const writer = new ThreadPageWriter(urls);
  const first = write(writer, repository());
  assert.equal(first.body.length, 2);
  assert.equal(first.body[0]!.repository.description, 'first');

  // Equal values in new row objects (a later request): the same page.
  assert.deepEqual(write(writer, repository()), first);

  const changed = [
    write(writer, repository({ repository: { description: 'second' } })),
    write(writer, repository({ repository: { topics: '["x"]' } })),
    write(writer, repository({ owner: { login: 'renamed' } })),
    write(writer, repository({ facts: { subscribers: 3 } })),
    write(writer, repository({ repository: { description: null } })),
  ];
  assert.equal(changed[0]!.body[0]!.repository.description, 'second');
  assert.deepEqual(changed[1]!.body[1]!.repository.topics, ['x']);
  assert.equal(changed[2]!.body[0]!.repository.owner.login, 'renamed');
  assert.equal(changed[3]!.body[1]!.repository.subscribers_count, 3);
  assert.equal(changed[4]!.body[0]!.repository.description, null);
  const bodies = new Set([first, ...changed].map((page) => JSON.stringify(page.body)));
  assert.equal(bodies.size, changed.length + 1);

  // Back to the first values: the first page again.
  assert.deepEqual(write(writer, repository()), first);
});

test('a kept repository is offered only at the version it was read at', () => {
  const writer = new ThreadPageWriter(urls);
  assert.equal(writer.cached(7, 1), undefined);
  const found = repository({ version: 4 });
  write(writer, found);
  assert.equal(writer.cached(7, 4), found);
  assert.equal(writer.cached(7, 5), undefined, 'a newer version: loaded again');
  assert.equal(writer.cached(7, 3), undefined);
  assert.equal(writer.cached(7, null), undefined, 'no version row: never from the cache');
  assert.equal(writer.cached(8, 4), undefined);
  write(writer, repository({ version: 5, repository: { description: 'moved' } }));
  assert.equal(writer.cached(7, 4), undefined);
  assert.equal(writer.cached(7, 5)?.repository.description, 'moved');
});

test('pages kept by tag: answered while kept, the least recently used going first beyond CACHED_PAGE_BYTES, one larger than that never kept', () => {
  const writer = new ThreadPageWriter(urls);
  const quarter = ThreadPageWriter.CACHED_PAGE_BYTES / 4;
  const page = (fill: number) => ({ body: Buffer.alloc(quarter, fill), returned: 50, total: 1000 });
  for (const tag of ['a', 'b', 'c', 'd']) writer.keep(tag, page(tag.charCodeAt(0)));
  assert.equal(writer.page('a')?.body[0], 'a'.charCodeAt(0), 'four quarters fit; reading a makes b the oldest');
  assert.equal(writer.page('x'), undefined);
  writer.keep('e', page(1));
  assert.equal(writer.page('b'), undefined, 'b, the least recently used, went first');
  for (const tag of ['a', 'c', 'd', 'e']) assert.ok(writer.page(tag), tag);
  writer.keep('e', page(2));
  assert.equal(writer.page('e')?.body[0], 1, 'a tag names one page: the first kept stays');
  writer.keep('huge', { body: Buffer.alloc(ThreadPageWriter.CACHED_PAGE_BYTES + 1), returned: 1, total: 1 });
  assert.equal(writer.page('huge'), undefined);
  for (const tag of ['a', 'c', 'd', 'e']) assert.ok(writer.page(tag), `${tag} stays beside a page too large to keep`);
});
