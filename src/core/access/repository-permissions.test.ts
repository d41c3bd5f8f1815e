// The permission rules on their own (the facts given, no database): who holds which permission,
// the legacy and five-level forms, and the platform's names.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fullPermissionsOf, permissionNames, permissionsOf, roleFrom } from './repository-permissions.ts';
import type { RepositoryAccessFacts } from './store.ts';

const USER = 7;
const facts = (over: Partial<RepositoryAccessFacts> = {}): RepositoryAccessFacts => ({
  id: 1, owner_id: 99, visibility: 'private', orgOwner: false, orgMember: false, orgSecurityManager: false,
  collaborator: null, team: null, visibilityReads: false, ...over,
});

test('roleFrom: owner and organization owners administer; members write; security managers read', () => {
  assert.equal(roleFrom(facts({ owner_id: USER }), USER), 'admin');
  assert.equal(roleFrom(facts({ orgOwner: true }), USER), 'admin');
  assert.equal(roleFrom(facts({ orgMember: true }), USER), 'push');
  assert.equal(roleFrom(facts({ orgSecurityManager: true }), USER), 'pull');
  assert.equal(roleFrom(facts(), USER), null);
  assert.equal(roleFrom(facts({ owner_id: USER + 1 }), USER), null);
});

test('roleFrom: the strongest of collaborator, team and membership counts', () => {
  assert.equal(roleFrom(facts({ collaborator: 'triage' }), USER), 'triage');
  assert.equal(roleFrom(facts({ team: 'maintain' }), USER), 'maintain');
  assert.equal(roleFrom(facts({ collaborator: 'pull', team: 'maintain' }), USER), 'maintain');
  assert.equal(roleFrom(facts({ collaborator: 'admin', team: 'pull' }), USER), 'admin');
  assert.equal(roleFrom(facts({ collaborator: 'triage', orgMember: true }), USER), 'push');
  assert.equal(roleFrom(facts({ collaborator: 'maintain', orgMember: true }), USER), 'maintain');
  assert.equal(roleFrom(facts({ team: 'triage', orgSecurityManager: true }), USER), 'triage');
  assert.equal(roleFrom(facts({ visibility: 'public', visibilityReads: true, collaborator: 'push' }), USER), 'push');
});

test('roleFrom: a repository its visibility lets the user read (public; internal to enterprise members) is read', () => {
  // The visibility rule itself is SQL (`readsByVisibility` in ./store.ts, one definition for the
  // single read and the lists): test/core/access/internal-visibility.test.ts exercises it through every route.
  assert.equal(roleFrom(facts({ visibility: 'public', visibilityReads: true }), USER), 'pull');
  assert.equal(roleFrom(facts({ visibility: 'internal' }), USER), null);
  assert.equal(roleFrom(facts({ visibility: 'internal', visibilityReads: true }), USER), 'pull');
  assert.equal(roleFrom(facts({ visibility: 'internal', visibilityReads: true, orgMember: true }), USER), 'push');
});

test('permissionsOf: the legacy triple of each level', () => {
  assert.deepEqual(permissionsOf(null), { admin: false, push: false, pull: false });
  assert.deepEqual(permissionsOf('pull'), { admin: false, push: false, pull: true });
  assert.deepEqual(permissionsOf('triage'), { admin: false, push: false, pull: true });
  assert.deepEqual(permissionsOf('push'), { admin: false, push: true, pull: true });
  assert.deepEqual(permissionsOf('maintain'), { admin: false, push: true, pull: true });
  assert.deepEqual(permissionsOf('admin'), { admin: true, push: true, pull: true });
});

test('fullPermissionsOf: the five levels of each level', () => {
  const none = { admin: false, maintain: false, push: false, triage: false, pull: false };
  assert.deepEqual(fullPermissionsOf(null), none);
  assert.deepEqual(fullPermissionsOf('pull'), { ...none, pull: true });
  assert.deepEqual(fullPermissionsOf('triage'), { ...none, pull: true, triage: true });
  assert.deepEqual(fullPermissionsOf('push'), { ...none, pull: true, triage: true, push: true });
  assert.deepEqual(fullPermissionsOf('maintain'), { admin: false, maintain: true, push: true, triage: true, pull: true });
  assert.deepEqual(fullPermissionsOf('admin'), { admin: true, maintain: true, push: true, triage: true, pull: true });
});

test('permissionNames: role_name and the legacy permission', () => {
  assert.deepEqual(permissionNames('pull'), { permission: 'read', role_name: 'read' });
  assert.deepEqual(permissionNames('triage'), { permission: 'read', role_name: 'triage' });
  assert.deepEqual(permissionNames('push'), { permission: 'write', role_name: 'write' });
  assert.deepEqual(permissionNames('maintain'), { permission: 'write', role_name: 'maintain' });
  assert.deepEqual(permissionNames('admin'), { permission: 'admin', role_name: 'admin' });
});
