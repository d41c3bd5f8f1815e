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
