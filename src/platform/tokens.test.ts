// The token format on its own: prefix, 30-character body and a 6-character CRC-32 checksum that a
// wrong character anywhere makes wrong; bearer headers; constant-time comparison of hashes.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { crc32 } from 'node:zlib';
import {
  bearerCredential, formatToken, generateToken, hashSecret, randomBase62, randomHex, secretMatches, secretsEqual,
  TOKEN_PREFIXES, tokenKindOf, type TokenKind,
} from './tokens.ts';

const BODY = 'abcdefghijklmnopqrstuvwxyzABCD';
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** `token` with the character at `index` replaced by the next base62 character. */
function changedAt(token: string, index: number): string {
  const next = BASE62[(BASE62.indexOf(token[index]!) + 1) % 62]!;
  return token.slice(0, index) + next + token.slice(index + 1);
}

test('formatToken: a known body gives a known token (CRC-32 of the body, 6 base62 digits)', () => {
  // zlib's CRC-32 (the standard one) as the oracle: 0xfd1c278c and 0x77e5db82.
  assert.equal(crc32(BODY), 0xfd1c278c);
  assert.equal(formatToken('classic', BODY), `chp_${BODY}4dNndU`);
  assert.equal(formatToken('classic', '000000000000000000000000000000'), 'chp_0000000000000000000000000000002C8GjS');
  for (let i = 0; i < 20; i++) {
    const body = randomBase62(30);
    let value = crc32(body);
    let digits = '';
    for (let d = 0; d < 6; d++, value = Math.floor(value / 62)) digits = BASE62[value % 62] + digits;
    assert.equal(formatToken('oauth', body), `cho_${body}${digits}`);
  }
  for (const kind of Object.keys(TOKEN_PREFIXES) as TokenKind[]) {
    assert.ok(formatToken(kind, BODY).startsWith(`${TOKEN_PREFIXES[kind]}_${BODY}`), kind);
  }
  for (const bad of ['', BODY.slice(1), `${BODY}x`, `${BODY.slice(1)}-`, `${BODY.slice(1)}é`]) {
    assert.throws(() => formatToken('classic', bad), /30 base62 characters/, bad);
  }
});

test('tokenKindOf: every kind is recognised by its prefix when the checksum is right', () => {
  for (const kind of Object.keys(TOKEN_PREFIXES) as TokenKind[]) {
    assert.equal(tokenKindOf(formatToken(kind, BODY)), kind);
    const generated = generateToken(kind);
    assert.match(generated, new RegExp(`^${TOKEN_PREFIXES[kind]}_[0-9A-Za-z]{36}$`));
    assert.equal(tokenKindOf(generated), kind);
  }
});

test('tokenKindOf: a wrong checksum, a changed body character, a wrong prefix or shape is no token', () => {
  const token = formatToken('classic', BODY);
  for (let i = 4; i < token.length; i++) assert.equal(tokenKindOf(changedAt(token, i)), null, `character ${i} changed`);
  assert.equal(tokenKindOf(`chp_${BODY}000000`), null);
  assert.equal(tokenKindOf(`xyz_${token.slice(4)}`), null);
  assert.equal(tokenKindOf(`chpat_${token.slice(4)}`), 'fine_grained', 'the checksum covers the body; the prefix names the kind');
  assert.equal(tokenKindOf(token.slice(0, -1)), null);
  assert.equal(tokenKindOf(`${token}0`), null);
  assert.equal(tokenKindOf(` ${token}`), null);
  assert.equal(tokenKindOf(`${token}\n`), null);
  assert.equal(tokenKindOf(token.toUpperCase()), null);
  assert.equal(tokenKindOf(''), null);
});

test('randomBase62 and randomHex: the asked length of the alphabet', () => {
  assert.match(randomBase62(30), /^[0-9A-Za-z]{30}$/);
  assert.equal(randomBase62(0), '');
  assert.notEqual(randomBase62(30), randomBase62(30));
  assert.match(randomHex(16), /^[0-9a-f]{32}$/);
});

test('hashSecret is base64 SHA-256; secretMatches and secretsEqual compare exactly', () => {
  assert.equal(hashSecret('abc'), 'ungWv48Bz+pBQUDeXa4iI7ADYaOWF3qctBD/YfIAFa0=');
  assert.ok(secretMatches('abc', hashSecret('abc')));
  assert.ok(!secretMatches('abd', hashSecret('abc')));
  assert.ok(!secretMatches('abc', hashSecret('abc').slice(1)));
  assert.ok(secretsEqual('same', 'same'));
  assert.ok(!secretsEqual('same', 'sane'));
  assert.ok(!secretsEqual('same', 'same '));
  assert.ok(!secretsEqual('', 'x'));
  assert.ok(secretsEqual('', ''));
});

test('bearerCredential: `Bearer <token>` in any case, one token, else null', () => {
  assert.equal(bearerCredential('Bearer abc'), 'abc');
  assert.equal(bearerCredential('bearer abc'), 'abc');
  assert.equal(bearerCredential('BEARER   abc  '), 'abc');
  assert.equal(bearerCredential('Bearer\tabc'), 'abc');
  for (const bad of [undefined, '', 'Bearer', 'Bearer ', 'Bearer a b', 'Token abc', 'Basic abc', 'xBearer abc', 'Bearerabc']) {
    assert.equal(bearerCredential(bad), null, String(bad));
  }
});
