import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseMentions } from './mentions.ts';

test('logins and teams are found once each, lower-cased', () => {
  assert.deepEqual(parseMentions('cc @Alice, @bob and @alice; @acme/Reviewers please (@acme/reviewers)'), {
    logins: ['alice', 'bob'],
    teams: [{ org: 'acme', slug: 'reviewers' }],
  });
});

test('trailing punctuation ends a login; hyphens stay inside', () => {
  assert.deepEqual(parseMentions('thanks @mona-lisa. And @octo-!').logins, ['mona-lisa', 'octo']);
});

test('e-mail addresses, code spans and fenced code are not mentions', () => {
  const body = 'mail bob@example.com, see `@carol` and\n```\n@dave\n```\nbut @erin';
  assert.deepEqual(parseMentions(body).logins, ['erin']);
});

test('an empty or missing body mentions nobody', () => {
  assert.deepEqual(parseMentions(null), { logins: [], teams: [] });
  assert.deepEqual(parseMentions('@ alone, @-bad'), { logins: [], teams: [] });
});

test('at most 50 users and 50 teams, the first ones', () => {
  const body = Array.from({ length: 80 }, (_, i) => `@user${i} @org/team${i}`).join(' ');
  const { logins, teams } = parseMentions(body);
  assert.equal(logins.length, 50);
  assert.equal(teams.length, 50);
  assert.equal(logins[49], 'user49');
  assert.deepEqual(teams[0], { org: 'org', slug: 'team0' });
});
