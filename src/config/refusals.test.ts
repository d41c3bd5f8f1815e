// The production refusals and the settings they decide on, no server: every setting refusals.ts
// (`refusals`, `secretKeyWeakness`) reads, alone and in combination (production vs laptop mode, test
// mode and the test clock, the secret key weak/absent/strong, the admin and metrics tokens, private
// webhook targets, the public URLs, the host 0.0.0.0 vs loopback, a trusted proxy, an unknown name),
// each row built as a start builds it: the environment through the real parser (readSettings), then
// refusals(config, env) as src/cli/serve.ts calls it; and the parse/settings rules those settings go
// through (parse.ts: bool, host, isLoopbackHost, mode, bearerToken, trustProxy, isLoopbackUrl;
// settings.ts: who reaches the server, the mode and the settings derived from it).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { bearerToken, bool, host, isLoopbackHost, isLoopbackUrl, mode, trustProxy } from './parse.ts';
import { refusals, secretKeyWeakness } from './refusals.ts';
import { readSettings } from './settings.ts';
import { ConfigError, type Env } from './types.ts';

const GOOD_KEY = 'Jq3v9TzX2mB7wKc5Ld8Rf1Hs6Np4Gy0UeAoViWxZbQ7';
const GOOD_TOKEN = 'chadm_8fK2pQ9xL4mZ7tR1wV6yB3nH5sJ0cD2gE4aU9iO1';
const METRICS_TOKEN = 'metrics-7Yc2Kq9Lm4Px8Rt1Vw6Zb3Nh5Sj0Df2Ga';

/** A production server (it listens on 0.0.0.0) with nothing to refuse; `extra` changes it, undefined unsets. */
const production = (extra: Env = {}): Env => strip({
  CODEHOST_HOST: '0.0.0.0', CODEHOST_DEMO: '0', CODEHOST_ADMIN_TOKEN: GOOD_TOKEN, CODEHOST_SECRET_KEY: GOOD_KEY, CODEHOST_METRICS_TOKEN: METRICS_TOKEN, ...extra,
});
/** A laptop server (the defaults: loopback, no proxy, loopback URLs); `extra` changes it. */
const laptop = (extra: Env = {}): Env => strip({ ...extra });
const strip = (env: Env): Env => Object.fromEntries(Object.entries(env).filter(([, value]) => value !== undefined));

/** What a start with `env` refuses, as src/cli/serve.ts asks it. */
const refused = (env: Env) => refusals(readSettings(env), env);

// The lines, word for word.
const FIX_KEY = 'make one with `codehost secret-key generate`';
const DEMO = 'CODEHOST_DEMO=1: production mode loads no demo data (its credentials are public); set CODEHOST_DEMO=0 (or CODEHOST_MODE=laptop on a machine only you reach)';
const NO_ADMIN = 'CODEHOST_ADMIN_TOKEN is not set: production mode generates none (the start banner would print it into the service\'s log for good); make one with `codehost admin-token generate` and set it';
const SHORT_ADMIN = (n: number, s: string) => `CODEHOST_ADMIN_TOKEN has ${n} character${s}: production mode needs at least 32; make one with \`codehost admin-token generate\``;
const NO_KEY = `CODEHOST_SECRET_KEY is not set: production mode needs a key of 32 bytes of entropy, the same on every process; ${FIX_KEY}`;
const WEAK_KEY = (why: string) => `CODEHOST_SECRET_KEY ${why}; ${FIX_KEY}`;
const CLOCK = 'CODEHOST_TEST_CLOCK=1 lets the admin token move the server\'s clock (and turns on test mode): production mode refuses it; unset CODEHOST_TEST_CLOCK';
const TEST_MODE = 'CODEHOST_TEST_MODE=1 turns on fault injection (/_admin/faults): production mode refuses it; unset CODEHOST_TEST_MODE';
const METRICS = (why: string) => `CODEHOST_METRICS_TOKEN is not set: GET /metrics would be open to anyone (${why}); set CODEHOST_METRICS_TOKEN (\`codehost admin-token generate\` makes a good one)`;
const PRIVATE = (why: string) => `CODEHOST_WEBHOOK_ALLOW_PRIVATE=1: webhooks may not reach private and loopback addresses ${why} (an app owner would read internal services' answers in its deliveries); unset it, and list your receivers' networks in CODEHOST_WEBHOOK_ALLOW_NETWORKS (10.20.0.0/16)`;
const UNKNOWN = (name: string, nearest: string) => `${name} is not a codehost setting: production mode does not start with a setting it would ignore; the nearest one is ${nearest} (the README lists them all)`;
const PROXY_WHY = 'a proxy forwards to it (CODEHOST_TRUST_PROXY)';
const IN_PRODUCTION = 'in production mode';
const BEHIND_PROXY = 'when a proxy is trusted (CODEHOST_TRUST_PROXY)';
const PUBLIC_URLS = 'when the public URLs (CODEHOST_WEB_URL, CODEHOST_API_URL) are not loopback';

describe('refusals: every setting alone and in combination, production and laptop mode, the exact lines or none (a test per row)', () => {
  // [what, environment, the lines refused in their order]
  const rows: [string, Env, string[]][] = [
    // Production mode, nothing wrong; then each setting alone.
    ['production, all good', production(), []],
    ['production on loopback (chosen), all good', production({ CODEHOST_MODE: 'production', CODEHOST_HOST: '127.0.0.1' }), []],
    ['production: demo data', production({ CODEHOST_DEMO: '1' }), [DEMO]],
    ['production: demo data left to its default (off)', production({ CODEHOST_DEMO: undefined }), []],
    ['production: no admin token', production({ CODEHOST_ADMIN_TOKEN: undefined }), [NO_ADMIN]],
    ['production: an empty admin token', production({ CODEHOST_ADMIN_TOKEN: '' }), [NO_ADMIN]],
    ['production: a one-character admin token', production({ CODEHOST_ADMIN_TOKEN: 'x' }), [SHORT_ADMIN(1, '')]],
    ['production: a 31-character admin token', production({ CODEHOST_ADMIN_TOKEN: GOOD_TOKEN.slice(0, 31) }), [SHORT_ADMIN(31, 's')]],
    ['production: a 32-character admin token', production({ CODEHOST_ADMIN_TOKEN: GOOD_TOKEN.slice(0, 32) }), []],
    ['production: no secret key', production({ CODEHOST_SECRET_KEY: undefined }), [NO_KEY]],
    ['production: an empty secret key', production({ CODEHOST_SECRET_KEY: '' }), [NO_KEY]],
    ['production: a short secret key', production({ CODEHOST_SECRET_KEY: 'k3k3k3' }), [WEAK_KEY('has 6 characters: a base64 key needs at least 43 for 32 bytes of entropy')]],
    ['production: a long key repeating a run', production({ CODEHOST_SECRET_KEY: 'k3'.repeat(30) }), [WEAK_KEY('repeats a run of 2 characters (it carries the entropy of that run alone)')]],
    ['production: the test clock alone', production({ CODEHOST_TEST_CLOCK: '1' }), [CLOCK]],
    ['production: test mode alone', production({ CODEHOST_TEST_MODE: '1' }), [TEST_MODE]],
    ['production: the test clock and test mode', production({ CODEHOST_TEST_CLOCK: '1', CODEHOST_TEST_MODE: '1' }), [CLOCK]],
    ['production: the test clock with test mode turned off', production({ CODEHOST_TEST_CLOCK: '1', CODEHOST_TEST_MODE: '0' }), [CLOCK]],
    ['production: both off', production({ CODEHOST_TEST_CLOCK: '0', CODEHOST_TEST_MODE: '0' }), []],
    ['production on 0.0.0.0: no metrics token', production({ CODEHOST_METRICS_TOKEN: undefined }), [METRICS('the server listens on 0.0.0.0')]],
    ['production on ::: no metrics token', production({ CODEHOST_HOST: '::', CODEHOST_METRICS_TOKEN: undefined }), [METRICS('the server listens on ::')]],
    ['production on loopback, no proxy: no metrics token is fine', production({ CODEHOST_MODE: 'production', CODEHOST_HOST: '127.0.0.1', CODEHOST_METRICS_TOKEN: undefined }), []],
    ['production on localhost behind a public URL: no metrics token is fine', production({ CODEHOST_HOST: 'localhost', CODEHOST_WEB_URL: 'https://code.example.com', CODEHOST_METRICS_TOKEN: undefined }), []],
    ['production on loopback behind a proxy: no metrics token', production({ CODEHOST_HOST: '127.0.0.1', CODEHOST_TRUST_PROXY: 'loopback', CODEHOST_METRICS_TOKEN: undefined }), [METRICS(PROXY_WHY)]],
    ['production on loopback behind one hop: no metrics token', production({ CODEHOST_HOST: '127.0.0.1', CODEHOST_TRUST_PROXY: '1', CODEHOST_METRICS_TOKEN: undefined }), [METRICS(PROXY_WHY)]],
    ['production on 0.0.0.0 behind a proxy: no metrics token (the proxy is said)', production({ CODEHOST_TRUST_PROXY: '10.0.0.1', CODEHOST_METRICS_TOKEN: undefined }), [METRICS(PROXY_WHY)]],
    ['production on 0.0.0.0 behind a proxy with a metrics token', production({ CODEHOST_TRUST_PROXY: '10.0.0.1' }), []],
    ['production: private webhook targets', production({ CODEHOST_WEBHOOK_ALLOW_PRIVATE: '1' }), [PRIVATE(IN_PRODUCTION)]],
    ['production on loopback with loopback URLs: private webhook targets', production({ CODEHOST_MODE: 'production', CODEHOST_HOST: '127.0.0.1', CODEHOST_WEBHOOK_ALLOW_PRIVATE: '1' }), [PRIVATE(IN_PRODUCTION)]],
    ['production: private webhook targets off', production({ CODEHOST_WEBHOOK_ALLOW_PRIVATE: '0' }), []],
    ['production: allowed networks instead', production({ CODEHOST_WEBHOOK_ALLOW_NETWORKS: '10.20.0.0/16' }), []],
    ['production: an unknown setting', production({ CODEHOST_WORKERS: '0' }), [UNKNOWN('CODEHOST_WORKERS', 'CODEHOST_WORKER')]],
    ['production: two unknown settings, sorted', production({ CODEHOST_WORKERS: '0', CODEHOST_DEMOO: '1' }), [UNKNOWN('CODEHOST_DEMOO', 'CODEHOST_DEMO'), UNKNOWN('CODEHOST_WORKERS', 'CODEHOST_WORKER')]],
    ['production: a tool variable is known', production({ CODEHOST_URL: 'http://127.0.0.1:3000' }), []],
    // Everything wrong at once: one line each, in this order.
    ['production: everything wrong', production({
      CODEHOST_WORKERS: '0', CODEHOST_DEMO: '1', CODEHOST_ADMIN_TOKEN: 'x', CODEHOST_SECRET_KEY: 'k3k3k3', CODEHOST_TEST_CLOCK: '1',
      CODEHOST_METRICS_TOKEN: undefined, CODEHOST_WEBHOOK_ALLOW_PRIVATE: '1',
    }), [
      UNKNOWN('CODEHOST_WORKERS', 'CODEHOST_WORKER'), DEMO, SHORT_ADMIN(1, ''), WEAK_KEY('has 6 characters: a base64 key needs at least 43 for 32 bytes of entropy'),
      CLOCK, METRICS('the server listens on 0.0.0.0'), PRIVATE(IN_PRODUCTION),
    ]],
    ['production by default on 0.0.0.0 with nothing set', { CODEHOST_HOST: '0.0.0.0' }, [NO_ADMIN, NO_KEY, METRICS('the server listens on 0.0.0.0')]],

    // Laptop mode: what production refuses is allowed, alone and together.
    ['laptop, the defaults', laptop(), []],
    ['laptop: demo data, test clock, test mode, no tokens, no key', laptop({ CODEHOST_DEMO: '1', CODEHOST_TEST_CLOCK: '1', CODEHOST_TEST_MODE: '1' }), []],
    ['laptop: the test clock alone', laptop({ CODEHOST_TEST_CLOCK: '1' }), []],
    ['laptop: a weak key and a short admin token', laptop({ CODEHOST_SECRET_KEY: 'k3k3k3', CODEHOST_ADMIN_TOKEN: 'x' }), []],
    ['laptop: an unknown setting (a warning elsewhere, not a refusal)', laptop({ CODEHOST_WORKERS: '0' }), []],
    ['laptop (chosen) on 0.0.0.0 without a metrics token', laptop({ CODEHOST_MODE: 'laptop', CODEHOST_HOST: '0.0.0.0' }), []],
    // Private webhook targets in laptop mode: refused only where others reach it through a proxy or a public URL.
    ['laptop: private webhook targets set', laptop({ CODEHOST_WEBHOOK_ALLOW_PRIVATE: '1' }), []],
    ['laptop (chosen) on 0.0.0.0: private webhook targets set', laptop({ CODEHOST_MODE: 'laptop', CODEHOST_HOST: '0.0.0.0', CODEHOST_WEBHOOK_ALLOW_PRIVATE: '1' }), []],
    ['laptop (chosen) behind a proxy: private webhook targets', laptop({ CODEHOST_MODE: 'laptop', CODEHOST_TRUST_PROXY: 'loopback', CODEHOST_WEBHOOK_ALLOW_PRIVATE: '1' }), [PRIVATE(BEHIND_PROXY)]],
    ['laptop (chosen) behind one hop: private webhook targets', laptop({ CODEHOST_MODE: 'laptop', CODEHOST_TRUST_PROXY: '1', CODEHOST_WEBHOOK_ALLOW_PRIVATE: '1' }), [PRIVATE(BEHIND_PROXY)]],
    ['laptop (chosen) behind a proxy: private targets off', laptop({ CODEHOST_MODE: 'laptop', CODEHOST_TRUST_PROXY: 'loopback' }), []],
    ['laptop (chosen), a public web URL alone: private webhook targets', laptop({ CODEHOST_MODE: 'laptop', CODEHOST_WEB_URL: 'https://code.example.com', CODEHOST_WEBHOOK_ALLOW_PRIVATE: '1' }), [PRIVATE(PUBLIC_URLS)]],
    ['laptop (chosen), a public API URL alone: private webhook targets', laptop({ CODEHOST_MODE: 'laptop', CODEHOST_API_URL: 'https://api.example.com/v3', CODEHOST_WEBHOOK_ALLOW_PRIVATE: '1' }), [PRIVATE(PUBLIC_URLS)]],
    ['laptop (chosen), both URLs public: private webhook targets', laptop({ CODEHOST_MODE: 'laptop', CODEHOST_WEB_URL: 'https://code.example.com', CODEHOST_API_URL: 'https://api.example.com/v3', CODEHOST_WEBHOOK_ALLOW_PRIVATE: '1' }), [PRIVATE(PUBLIC_URLS)]],
    ['laptop (chosen), loopback URLs set: private webhook targets', laptop({ CODEHOST_MODE: 'laptop', CODEHOST_WEB_URL: 'http://localhost:8080', CODEHOST_API_URL: 'http://[::1]:8080/api/v3', CODEHOST_WEBHOOK_ALLOW_PRIVATE: '1' }), []],
    ['laptop (chosen), a proxy and a public URL: the proxy is said', laptop({ CODEHOST_MODE: 'laptop', CODEHOST_TRUST_PROXY: 'loopback', CODEHOST_API_URL: 'https://api.example.com/v3', CODEHOST_WEBHOOK_ALLOW_PRIVATE: '1' }), [PRIVATE(BEHIND_PROXY)]],
    ['laptop (chosen), a public URL, targets off', laptop({ CODEHOST_MODE: 'laptop', CODEHOST_API_URL: 'https://api.example.com/v3', CODEHOST_WEBHOOK_ALLOW_PRIVATE: '0' }), []],
    // Left to the default, those settings are production mode: there the reason is the mode.
    ['a proxy left to the default mode: private webhook targets', { CODEHOST_TRUST_PROXY: 'loopback', CODEHOST_WEBHOOK_ALLOW_PRIVATE: '1' }, [NO_ADMIN, NO_KEY, METRICS(PROXY_WHY), PRIVATE(IN_PRODUCTION)]],
    ['a public API URL left to the default mode', production({ CODEHOST_HOST: undefined, CODEHOST_API_URL: 'https://api.example.com/v3', CODEHOST_WEBHOOK_ALLOW_PRIVATE: '1' }), [PRIVATE(IN_PRODUCTION)]],
  ];
  for (const [what, env, lines] of rows) {
    test(what, () => assert.deepEqual(refused(env), lines));
  }
});

test('refusals: without the environment (the default argument) no name is unknown', () => {
  const env = production({ CODEHOST_WORKERS: '0' });
  assert.deepEqual(refusals(readSettings(env)), []);
  assert.deepEqual(refusals(readSettings(env), env), [UNKNOWN('CODEHOST_WORKERS', 'CODEHOST_WORKER')]);
});

/** `count` distinct characters of `alphabet` once, then its first character until `length`: no run repeats. */
const spread = (alphabet: string, count: number, length: number) => alphabet.slice(0, count) + alphabet[0]!.repeat(length - count);
const BASE64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
const HEX = '0123456789abcdef';

describe('secretKeyWeakness: each alphabet at and below its length and distinct characters, repeated runs, the exact reasons (a test per row)', () => {
  const rows: [string, string, string | null][] = [
    ['the good key', GOOD_KEY, null],
    ['one character', 'a', 'has 1 character: a hex key needs at least 64 for 32 bytes of entropy'],
    ['empty', '', 'has 0 characters: a passphrase key needs at least 40 for 32 bytes of entropy'],
    ['hex, 63', spread(HEX, 16, 63), 'has 63 characters: a hex key needs at least 64 for 32 bytes of entropy'],
    ['hex, 64', spread(HEX, 16, 64), null],
    ['hex in capitals, 64', spread(HEX, 16, 64).toUpperCase(), null],
    ['hex in capitals, 63', spread(HEX, 16, 63).toUpperCase(), 'has 63 characters: a hex key needs at least 64 for 32 bytes of entropy'],
    ['hex, 12 distinct', spread(HEX, 12, 64), null],
    ['hex, 11 distinct', spread(HEX, 11, 64), 'has 11 distinct characters: a random hex key of this length has at least 12'],
    ['base64, 42', spread(BASE64, 30, 42), 'has 42 characters: a base64 key needs at least 43 for 32 bytes of entropy'],
    ['base64, 43', spread(BASE64, 30, 43), null],
    ['base64 with padding, 43', `${spread(BASE64, 30, 41)}==`, null],
    ['base64 with one pad, 42', `${spread(BASE64, 30, 41)}=`, 'has 42 characters: a base64 key needs at least 43 for 32 bytes of entropy'],
    ['base64url and +/ characters, 43', `+/${spread(BASE64, 30, 41)}`, null],
    ['base64, 20 distinct', spread(BASE64, 20, 43), null],
    ['base64, 19 distinct', spread(BASE64, 19, 43), 'has 19 distinct characters: a random base64 key of this length has at least 20'],
    ['three pads: a passphrase, 39', `${spread(BASE64, 30, 36)}===`, 'has 39 characters: a passphrase key needs at least 40 for 32 bytes of entropy'],
    ['three pads: a passphrase, 42', `${spread(BASE64, 30, 39)}===`, null],
    ['a pad inside: a passphrase, 39', `${BASE64.slice(0, 19)}=${BASE64.slice(19, 38)}`, 'has 39 characters: a passphrase key needs at least 40 for 32 bytes of entropy'],
    ['a passphrase, 40', `correct horse battery staple ${spread(BASE64, 11, 11)}`, null],
    ['a passphrase, 19 distinct', ` ${BASE64.slice(0, 18)}${'A'.repeat(21)}`, 'has 19 distinct characters: a random passphrase key of this length has at least 20'],
    ['a passphrase, 20 distinct', ` ${BASE64.slice(0, 19)}${'A'.repeat(20)}`, null],
    ['a run of one character', 'x'.repeat(64), 'repeats a run of 1 character (it carries the entropy of that run alone)'],
    ['a run of two characters', 'k3'.repeat(30), 'repeats a run of 2 characters (it carries the entropy of that run alone)'],
    ['a run of half the key', BASE64.slice(0, 22).repeat(2), 'repeats a run of 22 characters (it carries the entropy of that run alone)'],
    ['a run that does not fit a whole number of times', (BASE64.slice(0, 21).repeat(3)).slice(0, 50), 'repeats a run of 21 characters (it carries the entropy of that run alone)'],
    ['almost a run of half the key', `${BASE64.slice(0, 22)}${BASE64.slice(0, 21)}9`, null],
  ];
  for (const [what, key, weakness] of rows) {
    test(what, () => assert.equal(secretKeyWeakness(key), weakness, key));
  }
});

test('parse: the booleans a refusal reads (test clock, test mode, demo, private targets)', () => {
  for (const raw of ['1', 'true', 'yes', 'on', 'TRUE', 'On']) assert.equal(bool({ X: raw }, 'X', false), true, raw);
  for (const raw of ['0', 'false', 'no', 'off', 'FALSE', 'Off']) assert.equal(bool({ X: raw }, 'X', true), false, raw);
  assert.equal(bool({}, 'X', true), true);
  assert.equal(bool({}, 'X', false), false);
  assert.equal(bool({ X: '' }, 'X', true), true);
  assert.equal(bool({ X: '' }, 'X', false), false);
  for (const raw of ['2', 'y', 'enabled', ' 1']) {
    assert.throws(() => bool({ CODEHOST_TEST_CLOCK: raw }, 'CODEHOST_TEST_CLOCK', false), { name: 'Error', message: `CODEHOST_TEST_CLOCK must be a boolean (1/0, true/false), got "${raw}"` });
  }
  assert.throws(() => readSettings({ CODEHOST_TEST_MODE: 'maybe' }), ConfigError);
});

test('parse: the host, and whether it is loopback', () => {
  assert.equal(host({}), '127.0.0.1');
  assert.equal(host({ CODEHOST_HOST: '' }), '127.0.0.1');
  for (const value of ['0.0.0.0', '::', '::1', 'localhost', 'code.example.com', 'a', 'my-host', '10.1.2.3']) assert.equal(host({ CODEHOST_HOST: value }), value);
  for (const value of ['-bad', 'bad-', 'under_score', 'a..b', 'http://x', `${'a'.repeat(64)}.com`, `${'a.'.repeat(127)}ab`]) {
    assert.throws(() => host({ CODEHOST_HOST: value }), (error: unknown) => {
      assert.ok(error instanceof ConfigError);
      assert.equal(error.message, `CODEHOST_HOST must be an IP address or a host name of this machine (127.0.0.1, 0.0.0.0, ::, localhost), got "${value}"`);
      return true;
    }, value);
  }
  assert.equal(host({ CODEHOST_HOST: `${'a'.repeat(63)}.com` }), `${'a'.repeat(63)}.com`);
  assert.equal(host({ CODEHOST_HOST: `${'a.'.repeat(126)}a` }), `${'a.'.repeat(126)}a`);
  const rows: [string, boolean][] = [
    ['localhost', true], ['LOCALHOST', true], ['127.0.0.1', true], ['127.1.2.3', true], ['127.255.255.255', true],
    ['::1', true], ['0:0:0:0:0:0:0:1', true], ['0:0:1', false], ['0000:0000:0000:0000:0000:0000:0000:0001', true], ['::0001', true], ['0::1', true],
    ['0.0.0.0', false], ['::', false], ['128.0.0.1', false], ['10.0.0.1', false], ['::2', false], ['::11', false], ['1::1', false], ['::ffff:127.0.0.1', false],
    ['127.example.com', false], ['localhost.example.com', false], ['my-localhost', false], ['code.example.com', false],
  ];
  for (const [value, loopback] of rows) assert.equal(isLoopbackHost(value), loopback, value);
  const urls: [string, boolean][] = [
    ['http://127.0.0.1:3000', true], ['https://localhost', true], ['http://[::1]:3000/api/v3', true], ['http://127.9.9.9', true],
    ['https://code.example.com', false], ['http://0.0.0.0:3000', false], ['http://[::2]', false], ['http://10.0.0.1', false],
  ];
  for (const [url, loopback] of urls) assert.equal(isLoopbackUrl(url), loopback, url);
});

test('parse: the mode follows who reaches the server unless set; only laptop and production', () => {
  assert.equal(mode({}, null), 'laptop');
  assert.equal(mode({}, 'CODEHOST_HOST=0.0.0.0 listens beyond loopback'), 'production');
  assert.equal(mode({ CODEHOST_MODE: '' }, 'x'), 'production');
  assert.equal(mode({ CODEHOST_MODE: 'laptop' }, 'x'), 'laptop');
  assert.equal(mode({ CODEHOST_MODE: 'production' }, null), 'production');
  for (const value of ['Production', 'prod', 'dev']) {
    assert.throws(() => mode({ CODEHOST_MODE: value }, null), { message: `CODEHOST_MODE must be laptop or production, got "${value}"` });
  }
});

test('parse: the admin and metrics tokens, and a trusted proxy', () => {
  assert.equal(bearerToken({}, 'CODEHOST_METRICS_TOKEN'), null);
  assert.equal(bearerToken({ CODEHOST_METRICS_TOKEN: '' }, 'CODEHOST_METRICS_TOKEN'), null);
  assert.equal(bearerToken({ CODEHOST_ADMIN_TOKEN: GOOD_TOKEN }, 'CODEHOST_ADMIN_TOKEN'), GOOD_TOKEN);
  for (const value of ['two words', 'tab\there', ' lead']) {
    assert.throws(() => bearerToken({ CODEHOST_ADMIN_TOKEN: value }, 'CODEHOST_ADMIN_TOKEN'), { message: 'CODEHOST_ADMIN_TOKEN must not contain spaces (it is sent as "Authorization: Bearer <token>")' });
  }
  const rows: [string | undefined, false | number | string[]][] = [
    [undefined, false], ['', false], ['0', false], [' 0 ', false], ['1', 1], ['100', 100], ['loopback', ['loopback']],
    ['linklocal, uniquelocal', ['linklocal', 'uniquelocal']], ['10.0.0.1', ['10.0.0.1']], ['10.0.0.0/8', ['10.0.0.0/8']], ['10.0.0.0/32', ['10.0.0.0/32']],
    ['10.0.0.0/255.0.0.0', ['10.0.0.0/255.0.0.0']], ['fd00::/8', ['fd00::/8']], ['::1/128', ['::1/128']], ['::1', ['::1']],
  ];
  for (const [raw, expected] of rows) assert.deepEqual(trustProxy(raw === undefined ? {} : { CODEHOST_TRUST_PROXY: raw }), expected, raw);
  assert.throws(() => trustProxy({ CODEHOST_TRUST_PROXY: '101' }), { message: 'CODEHOST_TRUST_PROXY must be an integer from 0 to 100, got "101"' });
  for (const wrong of ['proxy', '10.0.0.0/33', '::1/129', '10.0.0.0/8/8', '10.0.0.0/x', '::1/ffff::', '::1/255.0.0.0', '10.0.0.0/1234', 'loopback,', 'Loopback']) {
    const part = wrong === 'loopback,' ? '' : wrong;
    assert.throws(() => trustProxy({ CODEHOST_TRUST_PROXY: wrong }), {
      message: `CODEHOST_TRUST_PROXY must be a hop count (1 for one proxy in front) or a comma-separated list of proxy addresses or CIDR ranges (10.0.0.1, 10.0.0.0/8, loopback), got "${part}"`,
    }, wrong);
  }
  assert.deepEqual(trustProxy({ CODEHOST_TRUST_PROXY: '10.0.0.0/0' }), ['10.0.0.0/0']);
  assert.deepEqual(trustProxy({ CODEHOST_TRUST_PROXY: '::/128' }), ['::/128']);
});

describe('settings: who reaches the server, the mode, and what follows them (the derived settings, in order; a test per row)', () => {
  const laptopDefaults = (from = 'CODEHOST_HOST=127.0.0.1 is loopback, no proxy is trusted, the URLs are loopback') => [
    { name: 'CODEHOST_MODE', value: 'laptop', from },
  ];
  // [what, environment, reachedBy, mode, private targets allowed, derived]
  const rows: [string, Env, string | null, 'laptop' | 'production', boolean, { name: string; value: string; from: string }[]][] = [
    ['the defaults', {}, null, 'laptop', true, [
      ...laptopDefaults(),
      { name: 'CODEHOST_WEBHOOK_ALLOW_PRIVATE', value: '1', from: 'laptop mode, loopback URLs, no proxy' },
      { name: 'CODEHOST_TEST_MODE', value: '0', from: 'CODEHOST_TEST_CLOCK=0' },
      { name: 'CODEHOST_DEMO', value: '1', from: 'laptop mode' },
    ]],
    ['on localhost', { CODEHOST_HOST: 'localhost' }, null, 'laptop', true, [
      ...laptopDefaults('CODEHOST_HOST=localhost is loopback, no proxy is trusted, the URLs are loopback'),
      { name: 'CODEHOST_WEBHOOK_ALLOW_PRIVATE', value: '1', from: 'laptop mode, loopback URLs, no proxy' },
      { name: 'CODEHOST_TEST_MODE', value: '0', from: 'CODEHOST_TEST_CLOCK=0' },
      { name: 'CODEHOST_DEMO', value: '1', from: 'laptop mode' },
    ]],
    ['the test clock', { CODEHOST_TEST_CLOCK: '1' }, null, 'laptop', true, [
      ...laptopDefaults(),
      { name: 'CODEHOST_WEBHOOK_ALLOW_PRIVATE', value: '1', from: 'laptop mode, loopback URLs, no proxy' },
      { name: 'CODEHOST_TEST_MODE', value: '1', from: 'CODEHOST_TEST_CLOCK=1' },
      { name: 'CODEHOST_DEMO', value: '1', from: 'laptop mode' },
    ]],
    ['everything set', { CODEHOST_MODE: 'laptop', CODEHOST_WEBHOOK_ALLOW_PRIVATE: '0', CODEHOST_TEST_MODE: '1', CODEHOST_DEMO: '0' }, null, 'laptop', false, []],
    ['on 0.0.0.0', { CODEHOST_HOST: '0.0.0.0' }, 'CODEHOST_HOST=0.0.0.0 listens beyond loopback', 'production', false, [
      { name: 'CODEHOST_MODE', value: 'production', from: 'CODEHOST_HOST=0.0.0.0 listens beyond loopback' },
      { name: 'CODEHOST_WEBHOOK_ALLOW_PRIVATE', value: '0', from: 'production mode' },
      { name: 'CODEHOST_TEST_MODE', value: '0', from: 'CODEHOST_TEST_CLOCK=0' },
      { name: 'CODEHOST_DEMO', value: '0', from: 'production mode' },
    ]],
    ['on 0.0.0.0 in laptop mode (chosen)', { CODEHOST_HOST: '0.0.0.0', CODEHOST_MODE: 'laptop' }, 'CODEHOST_HOST=0.0.0.0 listens beyond loopback', 'laptop', true, [
      { name: 'CODEHOST_WEBHOOK_ALLOW_PRIVATE', value: '1', from: 'laptop mode, loopback URLs, no proxy' },
      { name: 'CODEHOST_TEST_MODE', value: '0', from: 'CODEHOST_TEST_CLOCK=0' },
      { name: 'CODEHOST_DEMO', value: '1', from: 'laptop mode' },
    ]],
    ['behind a proxy', { CODEHOST_TRUST_PROXY: ' loopback ' }, 'CODEHOST_TRUST_PROXY=loopback: a proxy forwards to it', 'production', false, [
      { name: 'CODEHOST_MODE', value: 'production', from: 'CODEHOST_TRUST_PROXY=loopback: a proxy forwards to it' },
      { name: 'CODEHOST_WEBHOOK_ALLOW_PRIVATE', value: '0', from: 'production mode' },
      { name: 'CODEHOST_TEST_MODE', value: '0', from: 'CODEHOST_TEST_CLOCK=0' },
      { name: 'CODEHOST_DEMO', value: '0', from: 'production mode' },
    ]],
    ['on 0.0.0.0 behind a proxy: the host is said', { CODEHOST_HOST: '0.0.0.0', CODEHOST_TRUST_PROXY: '1' }, 'CODEHOST_HOST=0.0.0.0 listens beyond loopback', 'production', false, [
      { name: 'CODEHOST_MODE', value: 'production', from: 'CODEHOST_HOST=0.0.0.0 listens beyond loopback' },
      { name: 'CODEHOST_WEBHOOK_ALLOW_PRIVATE', value: '0', from: 'production mode' },
      { name: 'CODEHOST_TEST_MODE', value: '0', from: 'CODEHOST_TEST_CLOCK=0' },
      { name: 'CODEHOST_DEMO', value: '0', from: 'production mode' },
    ]],
    ['behind a proxy in laptop mode (chosen)', { CODEHOST_MODE: 'laptop', CODEHOST_TRUST_PROXY: '1' }, 'CODEHOST_TRUST_PROXY=1: a proxy forwards to it', 'laptop', false, [
      { name: 'CODEHOST_WEBHOOK_ALLOW_PRIVATE', value: '0', from: 'CODEHOST_TRUST_PROXY is set' },
      { name: 'CODEHOST_TEST_MODE', value: '0', from: 'CODEHOST_TEST_CLOCK=0' },
      { name: 'CODEHOST_DEMO', value: '1', from: 'laptop mode' },
    ]],
    ['a public web URL', { CODEHOST_WEB_URL: 'https://code.example.com/' }, 'CODEHOST_WEB_URL=https://code.example.com is not loopback', 'production', false, [
      { name: 'CODEHOST_MODE', value: 'production', from: 'CODEHOST_WEB_URL=https://code.example.com is not loopback' },
      { name: 'CODEHOST_WEBHOOK_ALLOW_PRIVATE', value: '0', from: 'production mode' },
      { name: 'CODEHOST_TEST_MODE', value: '0', from: 'CODEHOST_TEST_CLOCK=0' },
      { name: 'CODEHOST_DEMO', value: '0', from: 'production mode' },
    ]],
    ['a public API URL', { CODEHOST_API_URL: 'https://api.example.com/v3' }, 'CODEHOST_API_URL=https://api.example.com/v3 is not loopback', 'production', false, [
      { name: 'CODEHOST_MODE', value: 'production', from: 'CODEHOST_API_URL=https://api.example.com/v3 is not loopback' },
      { name: 'CODEHOST_WEBHOOK_ALLOW_PRIVATE', value: '0', from: 'production mode' },
      { name: 'CODEHOST_TEST_MODE', value: '0', from: 'CODEHOST_TEST_CLOCK=0' },
      { name: 'CODEHOST_DEMO', value: '0', from: 'production mode' },
    ]],
    ['both URLs public: the web URL is said', { CODEHOST_WEB_URL: 'https://code.example.com', CODEHOST_API_URL: 'https://api.example.com/v3' }, 'CODEHOST_WEB_URL=https://code.example.com is not loopback', 'production', false, [
      { name: 'CODEHOST_MODE', value: 'production', from: 'CODEHOST_WEB_URL=https://code.example.com is not loopback' },
      { name: 'CODEHOST_WEBHOOK_ALLOW_PRIVATE', value: '0', from: 'production mode' },
      { name: 'CODEHOST_TEST_MODE', value: '0', from: 'CODEHOST_TEST_CLOCK=0' },
      { name: 'CODEHOST_DEMO', value: '0', from: 'production mode' },
    ]],
    ['a public API URL in laptop mode (chosen)', { CODEHOST_MODE: 'laptop', CODEHOST_API_URL: 'https://api.example.com/v3' }, 'CODEHOST_API_URL=https://api.example.com/v3 is not loopback', 'laptop', false, [
      { name: 'CODEHOST_WEBHOOK_ALLOW_PRIVATE', value: '0', from: 'the public URLs are not loopback' },
      { name: 'CODEHOST_TEST_MODE', value: '0', from: 'CODEHOST_TEST_CLOCK=0' },
      { name: 'CODEHOST_DEMO', value: '1', from: 'laptop mode' },
    ]],
    ['a public web URL in laptop mode (chosen)', { CODEHOST_MODE: 'laptop', CODEHOST_WEB_URL: 'https://code.example.com' }, 'CODEHOST_WEB_URL=https://code.example.com is not loopback', 'laptop', false, [
      { name: 'CODEHOST_WEBHOOK_ALLOW_PRIVATE', value: '0', from: 'the public URLs are not loopback' },
      { name: 'CODEHOST_TEST_MODE', value: '0', from: 'CODEHOST_TEST_CLOCK=0' },
      { name: 'CODEHOST_DEMO', value: '1', from: 'laptop mode' },
    ]],
    ['production on loopback (chosen)', { CODEHOST_MODE: 'production' }, null, 'production', false, [
      { name: 'CODEHOST_WEBHOOK_ALLOW_PRIVATE', value: '0', from: 'production mode' },
      { name: 'CODEHOST_TEST_MODE', value: '0', from: 'CODEHOST_TEST_CLOCK=0' },
      { name: 'CODEHOST_DEMO', value: '0', from: 'production mode' },
    ]],
    ['private targets set in production: read, not derived', { CODEHOST_HOST: '0.0.0.0', CODEHOST_WEBHOOK_ALLOW_PRIVATE: '1', CODEHOST_TEST_MODE: '', CODEHOST_DEMO: '' }, 'CODEHOST_HOST=0.0.0.0 listens beyond loopback', 'production', true, [
      { name: 'CODEHOST_MODE', value: 'production', from: 'CODEHOST_HOST=0.0.0.0 listens beyond loopback' },
      { name: 'CODEHOST_TEST_MODE', value: '0', from: 'CODEHOST_TEST_CLOCK=0' },
      { name: 'CODEHOST_DEMO', value: '0', from: 'production mode' },
    ]],
  ];
  for (const [what, env, reachedBy, serverMode, allowPrivate, derived] of rows) {
    test(what, () => {
      const config = readSettings(env);
      assert.equal(config.reachedBy, reachedBy);
      assert.equal(config.mode, serverMode);
      assert.equal(config.webhooks.allowPrivateAddresses, allowPrivate);
      assert.deepEqual(config.derived, derived);
    });
  }
  test('test mode follows the test clock, the demo data laptop mode, the URLs the address', () => {
  // The test clock turns test mode on unless it is set; the demo data follow laptop mode.
  const settings = (env: Env) => { const c = readSettings(env); return [c.testClock, c.testMode, c.demo]; };
  assert.deepEqual(settings({}), [false, false, true]);
  assert.deepEqual(settings({ CODEHOST_TEST_CLOCK: '1' }), [true, true, true]);
  assert.deepEqual(settings({ CODEHOST_TEST_CLOCK: '1', CODEHOST_TEST_MODE: '0' }), [true, false, true]);
  assert.deepEqual(settings({ CODEHOST_TEST_MODE: '1' }), [false, true, true]);
  assert.deepEqual(settings({ CODEHOST_MODE: 'production', CODEHOST_DEMO: '1' }), [false, false, true]);
  // The URLs follow the address unless set, without a trailing slash.
  const urls = (env: Env) => { const c = readSettings(env); return [c.webUrl, c.apiUrl, c.urlsFollowAddress]; };
  assert.deepEqual(urls({}), ['http://127.0.0.1:3000', 'http://127.0.0.1:3000/api/v3', { api: true, web: true }]);
  assert.deepEqual(urls({ CODEHOST_HOST: '::', CODEHOST_PORT: '8080' }), ['http://[::1]:8080', 'http://[::1]:8080/api/v3', { api: true, web: true }]);
  assert.deepEqual(urls({ CODEHOST_WEB_URL: 'https://code.example.com/' }), ['https://code.example.com', 'https://code.example.com/api/v3', { api: true, web: false }]);
  assert.deepEqual(urls({ CODEHOST_API_URL: 'https://api.example.com/v3//' }), ['http://127.0.0.1:3000', 'https://api.example.com/v3', { api: false, web: true }]);
  assert.deepEqual(urls({ CODEHOST_WEB_URL: '', CODEHOST_API_URL: '' }), ['http://127.0.0.1:3000', 'http://127.0.0.1:3000/api/v3', { api: true, web: true }]);
  assert.throws(() => readSettings({ CODEHOST_API_URL: 'ftp://x' }), { message: 'CODEHOST_API_URL must be an absolute http:// or https:// URL, got "ftp://x"' });
  assert.throws(() => readSettings({ CODEHOST_WEB_URL: 'code.example.com' }), { message: 'CODEHOST_WEB_URL must be an absolute http:// or https:// URL, got "code.example.com"' });
  });
});
