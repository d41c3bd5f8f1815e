// The request journal's own rules, no server (journal.ts `Journal`): what each filter matches (a row
// per filter: the entries it keeps and those it leaves out), filters together, the order (newest
// first), the bound (the newest CODEHOST_JOURNAL_ENTRIES kept, ids going on), `since` as an id or a
// time (a bad one 422), and clear.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ApiError } from '../platform/errors.ts';
import type { JournalEntry } from './journal-entry.ts';
import { Journal, type JournalFilter } from './journal.ts';

type Entry = Omit<JournalEntry, 'id'>;
const NONE = { kind: null, login: null, app: null, installation: null, token_last_eight: null };

function entry(over: Partial<Omit<Entry, 'credential'>> & { credential?: Partial<Entry['credential']> } = {}): Entry {
  return {
    at: '2026-06-01T12:00:00.000Z', method: 'GET', path: '/repos/acme/widgets', query: {}, operation: 'repos/get', access: null, explanation: null, fault: null,
    status: 200, duration_ms: 1, request: { headers: {}, body: null }, response: { headers: {}, body: null }, warnings: [],
    ...over,
    credential: { ...NONE, ...over.credential },
  };
}

/** Five entries, ids 1..5, each differing from the others in the fields the filters read. */
const ENTRIES: Entry[] = [
  entry({ at: '2026-06-01T10:00:00.000Z', method: 'GET', path: '/repos/acme/widgets', operation: 'repos/get', status: 200, credential: { kind: 'classic', login: 'mona', token_last_eight: 'AAAA1111' } }),
  entry({ at: '2026-06-01T11:00:00.000Z', method: 'POST', path: '/repos/acme/widgets/issues', operation: 'issues/create', status: 201, credential: { kind: 'installation', app: 'app-a', installation: 7, token_last_eight: 'BBBB2222' }, warnings: [{ code: 'missing_api_version', message: '' }] }),
  entry({ at: '2026-06-01T12:00:00.000Z', method: 'GET', path: '/user', operation: 'users/get-authenticated', status: 401, credential: { kind: 'classic', token_last_eight: 'CCCC3333' } }),
  entry({ at: '2026-06-01T13:00:00.000Z', method: 'DELETE', path: '/repos/acme/gadgets', operation: 'repos/delete', status: 404, credential: { kind: 'installation', app: 'app-b', installation: 70, token_last_eight: 'DDDD4444' }, warnings: [{ code: 'unserved_operation', message: '' }, { code: 'injected_fault', message: '' }] }),
  entry({ at: '2026-06-01T14:00:00.000Z', method: 'GET', path: '/_admin/requests', operation: null, status: 503, credential: { kind: 'admin' } }),
];

function journalOfFive(limit = 100): Journal {
  const journal = new Journal(limit);
  for (const item of ENTRIES) journal.add(item);
  return journal;
}

const ids = (journal: Journal, filter: JournalFilter) => journal.find(filter).map((found) => found.id);

/** A row per filter value: the ids it finds, newest first. */
const FILTERS: [string, JournalFilter, number[]][] = [
  ['none', {}, [5, 4, 3, 2, 1]],
  ['method GET', { method: 'GET' }, [5, 3, 1]],
  ['method in lower case', { method: 'post' }, [2]],
  ['method no entry has', { method: 'PUT' }, []],
  ['path exact', { path: '/user' }, [3]],
  ['path exact: not a prefix', { path: '/repos/acme/widgets' }, [1]],
  ['path glob', { path: '/repos/acme/*' }, [4, 2, 1]],
  ['path glob across slashes', { path: '/repos/*/issues' }, [2]],
  ['path with /api/v3 taken off', { path: '/api/v3/user' }, [3]],
  ['path /api/v3 alone is /', { path: '/api/v3' }, []],
  ['path: a dot is a dot', { path: '/repos/acme.widgets' }, []],
  ['operation', { operation: 'repos/delete' }, [4]],
  ['login', { login: 'mona' }, [1]],
  ['app', { app: 'app-a' }, [2]],
  ['app: another app', { app: 'app-b' }, [4]],
  ['installation', { installation: '7' }, [2]],
  ['installation: not a prefix of 70', { installation: '70' }, [4]],
  ['token by its last eight', { token: 'CCCC3333' }, [3]],
  ['token whole', { token: 'chp_xxxxxxxxxxxxDDDD4444' }, [4]],
  ['token: its last eight only', { token: 'DDDD4444x' }, []],
  ['warning', { warning: 'missing_api_version' }, [2]],
  ['warning: one of several', { warning: 'injected_fault' }, [4]],
  ['status exact', { status: '404' }, [4]],
  ['status class', { status: '4xx' }, [4, 3]],
  ['status class 2xx', { status: '2xx' }, [2, 1]],
  ['status class 5xx', { status: '5xx' }, [5]],
  ['since an id: after it', { since: '3' }, [5, 4]],
  ['since id 0: all', { since: '0' }, [5, 4, 3, 2, 1]],
  ['since a time: at or after it', { since: '2026-06-01T12:00:00Z' }, [5, 4, 3]],
  ['since a time with an offset', { since: '2026-06-01T14:30:00+02:00' }, [5, 4]],
  ['since a time between entries', { since: '2026-06-01T12:00:00.001Z' }, [5, 4]],
  ['together: method and path', { method: 'GET', path: '/repos/*' }, [1]],
  ['together: app and status', { app: 'app-b', status: '4xx' }, [4]],
  ['together: nothing matches both', { login: 'mona', status: '201' }, []],
];

test('each filter finds its entries, newest first', () => {
  const journal = journalOfFive();
  for (const [name, filter, expected] of FILTERS) assert.deepEqual(ids(journal, filter), expected, name);
});

test('since: neither an id nor a time is a 422 naming the field', () => {
  const journal = journalOfFive();
  for (const since of ['yesterday', '12abc', '2026-13-45T00:00:00Z']) {
    assert.throws(() => journal.find({ since }), (error: unknown) => {
      assert.ok(error instanceof ApiError);
      assert.equal(error.status, 422);
      assert.deepEqual(error.errors, [{ resource: 'Journal', field: 'since', code: 'custom', message: 'since is an entry id or an ISO 8601 time' }]);
      return true;
    }, since);
  }
});

test('the bound: the newest `limit` kept, the oldest dropped first; ids go on; clear empties and ids still go on', () => {
  const journal = journalOfFive(3);
  assert.deepEqual(ids(journal, {}), [5, 4, 3]);
  journal.add(entry({ path: '/sixth' }));
  assert.deepEqual(ids(journal, {}), [6, 5, 4]);
  const exact = new Journal(5);
  for (const item of ENTRIES) exact.add(item);
  assert.deepEqual(ids(exact, {}), [5, 4, 3, 2, 1]);
  const one = new Journal(1);
  one.add(ENTRIES[0]!);
  one.add(ENTRIES[1]!);
  assert.deepEqual(ids(one, {}), [2]);
  journal.clear();
  assert.deepEqual(ids(journal, {}), []);
  journal.add(entry({ path: '/seventh' }));
  assert.deepEqual(journal.find({}).map((found) => [found.id, found.path]), [[7, '/seventh']]);
});

test('an entry is kept as added, its id first', () => {
  const journal = new Journal(10);
  journal.add(ENTRIES[1]!);
  const [found] = journal.find({});
  assert.deepEqual(found, { id: 1, ...ENTRIES[1]! });
});

test('edges: `/api/v3` alone is the path `/`; since an id of two digits is an id, not a year', () => {
  const journal = new Journal(100);
  for (let i = 0; i < 12; i++) journal.add(entry({ path: i === 0 ? '/' : `/n/${i}`, at: '2026-06-01T12:00:00.000Z' }));
  assert.deepEqual(ids(journal, { path: '/api/v3' }), [1]);
  assert.deepEqual(ids(journal, { path: '/' }), [1]);
  assert.deepEqual(ids(journal, { since: '10' }), [12, 11]);
});
