// What an app used (permissions-used.ts), no server: a group per credential (two apps on one
// account, two installations of one app, two tokens of one user never mix), what each call needed
// summed at its highest level, what it held (the newest entry's), what it held and never needed,
// each operation and each refusal; entries with no credential or no rule left out.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { JournalEntry } from './journal-entry.ts';
import { permissionsUsed } from './permissions-used.ts';

const NONE = { kind: null, login: null, app: null, installation: null, token_last_eight: null };
let nextId = 1;

function entry(credential: Partial<JournalEntry['credential']>, over: Partial<JournalEntry> = {}): JournalEntry {
  return {
    id: nextId++, at: '2026-06-01T12:00:00.000Z', method: 'GET', path: '/x', query: {}, operation: null, access: null, explanation: null, fault: null,
    status: 200, duration_ms: 1, request: { headers: {}, body: null }, response: { headers: {}, body: null }, warnings: [],
    credential: { ...NONE, ...credential }, ...over,
  };
}

const installationOf = (app: string, installation: number) => ({ kind: 'installation', app, installation, token_last_eight: `tok${installation}`.padEnd(8, '0') });
const APP_A = installationOf('app-a', 1);
const APP_B = installationOf('app-b', 2);
const APP_A_OTHER = installationOf('app-a', 3);
const HELD_A = { kind: 'installation', permissions: { issues: 'write', contents: 'write', metadata: 'read' } } as const;
const HELD_B = { kind: 'installation', permissions: { pull_requests: 'write', metadata: 'read' } } as const;

const used = (permissions: Record<string, 'read' | 'write'>) => ({ permissions });

test('two apps on one account, two installations of one: each group holds only its own calls', () => {
  // Newest first, as the journal finds them; the apps' calls interleaved.
  const entries = [
    entry(APP_B, { operation: 'pulls/create', access: { used: used({ pull_requests: 'write' }), held: HELD_B } }),
    entry(APP_A, { operation: 'issues/create', access: { used: used({ issues: 'write' }), held: HELD_A } }),
    entry(APP_A_OTHER, { operation: 'repos/get', access: { used: used({ metadata: 'read' }), held: HELD_A } }),
    entry(APP_B, { operation: 'repos/get', access: { used: used({ metadata: 'read' }), held: HELD_B } }),
    entry(APP_A, { operation: 'issues/list', access: { used: used({ issues: 'read' }), held: HELD_A } }),
    entry(APP_A, { operation: 'issues/list', access: { used: used({ issues: 'read' }), held: HELD_A } }),
  ];
  const groups = permissionsUsed(entries);
  assert.deepEqual(groups.map((group) => [group.credential.app, group.credential.installation, group.requests]), [['app-b', 2, 2], ['app-a', 1, 3], ['app-a', 3, 1]]);
  const [b, a, aOther] = groups;
  assert.deepEqual(a!.used, { scopes: [], permissions: { issues: 'write' } });
  assert.deepEqual(a!.operations, { 'issues/create': { calls: 1, used: used({ issues: 'write' }) }, 'issues/list': { calls: 2, used: used({ issues: 'read' }) } });
  assert.deepEqual(a!.unused, { scopes: [], permissions: { contents: 'none', metadata: 'none' } });
  assert.deepEqual(b!.used, { scopes: [], permissions: { pull_requests: 'write', metadata: 'read' } });
  assert.deepEqual(b!.operations, { 'pulls/create': { calls: 1, used: used({ pull_requests: 'write' }) }, 'repos/get': { calls: 1, used: used({ metadata: 'read' }) } });
  assert.deepEqual(b!.unused, { scopes: [], permissions: {} });
  assert.deepEqual(aOther!.used, { scopes: [], permissions: { metadata: 'read' } });
  assert.deepEqual(aOther!.unused, { scopes: [], permissions: { issues: 'none', contents: 'none' } });
  assert.deepEqual(a!.granted, { kind: 'installation', permissions: HELD_A.permissions });
  // Each group's `granted` is a copy: changing one changes no other, nor what an entry held.
  (a!.granted.permissions as Record<string, string>).issues = 'read';
  assert.equal(aOther!.granted.permissions!.issues, 'write');
  assert.equal(HELD_A.permissions.issues, 'write');
});

test('a group per every part of the credential: kind, login, app, installation, token', () => {
  const base = { kind: 'classic', login: 'mona', app: null, installation: null, token_last_eight: 'aaaaaaaa' };
  const held = { kind: 'classic', scopes: ['repo'] };
  const variants = [base, { ...base, kind: 'oauth' }, { ...base, login: 'hubot' }, { ...base, app: 'app-a' }, { ...base, installation: 9 }, { ...base, token_last_eight: 'bbbbbbbb' }];
  const groups = permissionsUsed(variants.map((credential) => entry(credential, { access: { used: { scope: 'repo' }, held } })));
  assert.equal(groups.length, variants.length);
  assert.deepEqual(groups.map((group) => group.requests), variants.map(() => 1));
});

test('scopes: each needed once, sorted; unused the held ones never needed; the newest entry\'s holdings', () => {
  const credential = { kind: 'classic', login: 'mona', token_last_eight: 'cccccccc' };
  const [group] = permissionsUsed([
    entry(credential, { method: 'GET', path: '/user/repos', access: { used: { scope: 'repo' }, held: { kind: 'classic', scopes: ['repo', 'gist', 'user'] } } }),
    entry(credential, { operation: 'gists/list', access: { used: { scope: 'gist' }, held: { kind: 'classic', scopes: ['repo', 'gist'] } } }),
    entry(credential, { operation: 'gists/get', access: { used: { scope: 'gist' }, held: { kind: 'classic', scopes: ['repo', 'gist'] } } }),
    entry(credential, { operation: 'meta/root', access: { used: null, held: { kind: 'classic', scopes: [] } } }),
    entry(credential, { operation: 'repos/get', access: { used: { scope: 'repo' }, held: { kind: 'classic', scopes: ['repo'] } } }),
  ]);
  assert.deepEqual(group!.used, { scopes: ['gist', 'repo'], permissions: {} });
  assert.deepEqual(group!.granted, { kind: 'classic', scopes: ['repo', 'gist', 'user'] });
  assert.deepEqual(group!.unused, { scopes: ['user'], permissions: {} });
  assert.equal(group!.requests, 5);
  assert.deepEqual(group!.operations, {
    'GET /user/repos': { calls: 1, used: { scope: 'repo' } },
    'gists/list': { calls: 1, used: { scope: 'gist' } },
    'gists/get': { calls: 1, used: { scope: 'gist' } },
    'meta/root': { calls: 1, used: null },
    'repos/get': { calls: 1, used: { scope: 'repo' } },
  });
});

test('permissions: the highest level any call needed; write held but read needed leaves `read`', () => {
  const [group] = permissionsUsed([
    entry(APP_A, { operation: 'op', access: { used: used({ issues: 'read', contents: 'read' }), held: HELD_A } }),
    entry(APP_A, { operation: 'op', access: { used: used({ issues: 'write' }), held: HELD_A } }),
    entry(APP_A, { operation: 'op', access: { used: used({ issues: 'read', metadata: 'read' }), held: HELD_A } }),
    entry(APP_A, { operation: 'op', access: { used: null, held: HELD_A } }),
  ]);
  assert.deepEqual(group!.used.permissions, { issues: 'write', contents: 'read', metadata: 'read' });
  assert.deepEqual(group!.unused.permissions, { contents: 'read' });
  // One operation's need: its highest level of each permission, whatever the order.
  assert.deepEqual(group!.operations, { op: { calls: 4, used: used({ issues: 'write', contents: 'read', metadata: 'read' }) } });
  const [scopeFirst] = permissionsUsed([
    entry(APP_A, { operation: 'op', access: { used: { scope: 'repo' }, held: HELD_A } }),
    entry(APP_A, { operation: 'op', access: { used: used({ issues: 'write' }), held: HELD_A } }),
  ]);
  assert.deepEqual(scopeFirst!.operations.op!.used, { scope: 'repo' });
  const [permissionsFirst] = permissionsUsed([
    entry(APP_A, { operation: 'op', access: { used: used({ issues: 'write' }), held: HELD_A } }),
    entry(APP_A, { operation: 'op', access: { used: { scope: 'repo' }, held: HELD_A } }),
  ]);
  assert.deepEqual(permissionsFirst!.operations.op!.used, used({ issues: 'write' }));
});

test('refusals: counted per operation with what they needed; left out: no credential, no rule, nothing held', () => {
  const explanation = { reason: 'missing_permission', message: 'no', needed: { permissions: [{ issues: 'write' }] }, held: HELD_B } as never;
  const [group, ...rest] = permissionsUsed([
    entry(APP_B, { operation: 'issues/create', explanation, status: 403 }),
    entry(APP_B, { method: 'POST', path: '/repos/a/b/issues', explanation, status: 403 }),
    entry(APP_B, { operation: 'issues/create', explanation, status: 403 }),
    entry(APP_A, { explanation: { reason: 'bad_credentials', message: 'no' } as never, status: 401 }),
    entry({}, { access: { used: null, held: { kind: null } } }),
    entry(APP_A, { access: null, explanation: null }),
  ]);
  assert.deepEqual(rest, []);
  assert.equal(group!.requests, 0);
  assert.deepEqual(group!.operations, {});
  assert.deepEqual(group!.refused, {
    'issues/create': { calls: 2, reason: 'missing_permission', needed: { permissions: [{ issues: 'write' }] } },
    'POST /repos/a/b/issues': { calls: 1, reason: 'missing_permission', needed: { permissions: [{ issues: 'write' }] } },
  });
  assert.deepEqual(group!.granted, { kind: 'installation', permissions: HELD_B.permissions });
  assert.deepEqual(group!.unused.permissions, { pull_requests: 'none', metadata: 'none' });
  // A refusal that says what it needed but not what was held, and one that needed nothing named.
  const [noNeed] = permissionsUsed([
    entry(APP_A, { operation: 'x', explanation: { reason: 'not_found', message: 'no', needed: { roles: ['admin'] }, held: { kind: 'installation' } } as never }),
  ]);
  assert.deepEqual(noNeed!.granted, { kind: 'installation' });
  assert.deepEqual(noNeed!.refused, { x: { calls: 1, reason: 'not_found', needed: { roles: ['admin'] } } });
  assert.deepEqual(noNeed!.unused, { scopes: [], permissions: {} });
});
