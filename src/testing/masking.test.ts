// The journal's masking, no server (masking.ts): every place a secret can sit in an entry (the
// request's headers in each Authorization form, its query, its JSON and form bodies; the answer's
// headers, Location, Link and set-cookie among them, and its bodies: a minted token, a redirect's
// text, an error echoing the input, a webhook's or a client's secret) × every kind of secret (each
// token kind, a JWT, a private key, a client secret, a webhook secret, a password, a signed URL's
// signature, the server's own admin token). One table: a row per place, a column per kind; each
// cell says the secret is nowhere whole in what the entry keeps (the journal, the console's view of
// it, the same admin API), and a token shows its last four characters at most.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { BODY_LIMIT, keptBody, maskedParts, maskHeaders, maskSeen, maskValue, type Seen } from './masking.ts';

const MASK = '[masked]';
const ADMIN = 'admin-token-of-the-server-0123456789abcdef';

interface Kind {
  name: string;
  value: string;
  /** Recognisable as a secret by its form alone (a prefix, a JWT's, a PEM block's). */
  shaped: boolean;
}

const KINDS: Kind[] = [
  { name: 'classic token', value: 'chp_ClassicToken000000000000000000AbCd12', shaped: true },
  { name: 'fine-grained token', value: 'chpat_FineGrained0000000000000000000XyZw34', shaped: true },
  { name: 'OAuth token', value: 'cho_OAuthToken00000000000000000000000QrSt56', shaped: true },
  { name: 'app user token', value: 'chu_AppUserToken000000000000000000000Uv78', shaped: true },
  { name: 'installation token', value: 'chs_InstallationToken000000000000000Mn90', shaped: true },
  { name: 'JWT', value: 'eyJhbGciOiJSUzI1NiJ9.eyJpc3MiOiIxIn0.c2lnbmF0dXJlLW9mLXRoZS1qd3Q', shaped: true },
  { name: 'private key', value: '-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAprivatekeybody\n-----END RSA PRIVATE KEY-----', shaped: true },
  { name: 'client secret', value: '3f9a1c7e5b2d4f6a8c0e1b3d5f7a9c2e4b6d8f0a', shaped: false },
  { name: 'webhook secret', value: 'whsec-opaque-webhook-secret-77aa', shaped: false },
  { name: 'password', value: 'correct-horse-battery-staple-9', shaped: false },
  { name: 'signature', value: 'c2lnbmVkLXVybC1zaWduYXR1cmUtYWJjZGVm', shaped: false },
  { name: 'admin token (known)', value: ADMIN, shaped: false },
];

interface Parts {
  query?: Record<string, unknown>;
  requestHeaders?: Record<string, unknown>;
  requestBody?: unknown;
  responseHeaders?: Record<string, unknown>;
  responseBody?: unknown;
}

const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
const enc = encodeURIComponent;

/**
 * Where a secret sits: a row per place. `any` rows hold every kind (a place named for a secret, or
 * one the request's masking saw first); `shaped` rows only what its form gives away (a text with no
 * name for it: the kinds a scanner recognises).
 */
const PLACES: { place: string; holds: 'any' | 'shaped'; parts: (secret: string) => Parts }[] = [
  // The request's headers: Authorization in every form.
  { place: 'request Authorization: token', holds: 'any', parts: (s) => ({ requestHeaders: { authorization: `token ${s.replaceAll('\n', ' ')}` } }) },
  { place: 'request Authorization: Bearer', holds: 'any', parts: (s) => ({ requestHeaders: { Authorization: `Bearer ${s.replaceAll('\n', ' ')}` } }) },
  { place: 'request Authorization: no scheme', holds: 'any', parts: (s) => ({ requestHeaders: { authorization: s.replaceAll('\n', '') } }) },
  { place: 'request Authorization: Basic client_id:secret', holds: 'any', parts: (s) => ({ requestHeaders: { authorization: basic('Iv1.0123456789fedcba', s) } }) },
  { place: 'request Authorization: Basic login:token', holds: 'any', parts: (s) => ({ requestHeaders: { authorization: basic('mona', s) } }) },
  { place: 'request Proxy-Authorization', holds: 'any', parts: (s) => ({ requestHeaders: { 'proxy-authorization': `Bearer ${s.replaceAll('\n', ' ')}` } }) },
  { place: 'request Cookie', holds: 'any', parts: (s) => ({ requestHeaders: { cookie: `session=${enc(s)}` } }) },
  { place: 'request X-Hub-Signature-256', holds: 'any', parts: (s) => ({ requestHeaders: { 'x-hub-signature-256': `sha256=${s}` } }) },
  { place: 'request X-Webhook-Secret', holds: 'any', parts: (s) => ({ requestHeaders: { 'x-webhook-secret': s } }) },
  { place: 'request X-Api-Token (array)', holds: 'any', parts: (s) => ({ requestHeaders: { 'x-api-token': [s, 'other'] } }) },
  { place: 'request User-Agent (text)', holds: 'shaped', parts: (s) => ({ requestHeaders: { 'user-agent': `client/1.0 ${s}` } }) },
  // The query.
  { place: 'query access_token', holds: 'any', parts: (s) => ({ query: { access_token: s } }) },
  { place: 'query client_secret', holds: 'any', parts: (s) => ({ query: { client_secret: s } }) },
  { place: 'query code', holds: 'any', parts: (s) => ({ query: { code: s } }) },
  { place: 'query sig', holds: 'any', parts: (s) => ({ query: { sig: s } }) },
  { place: 'query signature', holds: 'any', parts: (s) => ({ query: { signature: s } }) },
  { place: 'query q (text)', holds: 'shaped', parts: (s) => ({ query: { q: `find ${s}` } }) },
  // The request's bodies.
  { place: 'JSON body client_secret', holds: 'any', parts: (s) => ({ requestBody: { client_id: 'Iv1.x', client_secret: s } }) },
  { place: 'JSON body webhook.secret', holds: 'any', parts: (s) => ({ requestBody: { webhook: { url: 'http://127.0.0.1/hook', secret: s } } }) },
  { place: 'JSON body password', holds: 'any', parts: (s) => ({ requestBody: { login: 'mona', password: s } }) },
  { place: 'JSON body private_key', holds: 'any', parts: (s) => ({ requestBody: { private_key: s } }) },
  { place: 'JSON body api_key', holds: 'any', parts: (s) => ({ requestBody: { api_key: s } }) },
  { place: 'JSON body access_token in a list', holds: 'any', parts: (s) => ({ requestBody: [{ access_token: s }] }) },
  { place: 'JSON text body client_secret', holds: 'any', parts: (s) => ({ requestBody: JSON.stringify({ client_secret: s }) }) },
  { place: 'form body client_secret', holds: 'any', parts: (s) => ({ requestBody: `client_id=Iv1.x&client_secret=${enc(s)}&grant_type=x` }) },
  { place: 'form body refresh_token first', holds: 'any', parts: (s) => ({ requestBody: `refresh_token=${enc(s)}&client_id=Iv1.x` }) },
  { place: 'YAML body secret:', holds: 'any', parts: (s) => ({ requestBody: `apps:\n  - slug: a\n    webhook_secret: ${JSON.stringify(s)}\n` }) },
  { place: 'JSON body description (text)', holds: 'shaped', parts: (s) => ({ requestBody: { description: `see ${s}` } }) },
  // The answer's headers.
  { place: 'response Location ?signature=', holds: 'any', parts: (s) => ({ responseHeaders: { location: `http://127.0.0.1:1/_storage/a.tar.gz?expires=1&signature=${enc(s)}` } }) },
  { place: 'response Location ?access_token=', holds: 'any', parts: (s) => ({ responseHeaders: { Location: `http://127.0.0.1:1/cb?access_token=${enc(s)}&state=1` } }) },
  { place: 'response Location ?code=', holds: 'any', parts: (s) => ({ responseHeaders: { location: `http://127.0.0.1:1/cb?code=${enc(s)}` } }) },
  { place: 'response Link ?token=', holds: 'any', parts: (s) => ({ responseHeaders: { link: `<http://127.0.0.1:1/x?page=2&token=${enc(s)}>; rel="next"` } }) },
  { place: 'response Set-Cookie', holds: 'any', parts: (s) => ({ responseHeaders: { 'set-cookie': [`session=${enc(s)}; HttpOnly`, 'other=1'] } }) },
  { place: 'response X-Codehost-Token', holds: 'any', parts: (s) => ({ responseHeaders: { 'x-codehost-token': s } }) },
  { place: 'response X-Echo (text)', holds: 'shaped', parts: (s) => ({ responseHeaders: { 'x-echo': s } }) },
  // The answer's bodies.
  { place: 'response body a minted token', holds: 'any', parts: (s) => ({ responseBody: JSON.stringify({ token: s, expires_at: '2026-01-01T00:00:00Z' }) }) },
  { place: 'response body access_token', holds: 'any', parts: (s) => ({ responseBody: { access_token: s, token_type: 'bearer' } }) },
  { place: 'response body client_secret, private_key, webhook_secret', holds: 'any', parts: (s) => ({ responseBody: { client_secret: s, private_key: s, webhook_secret: s } }) },
  { place: 'response body a redirect text (signed URL)', holds: 'any', parts: (s) => ({ responseBody: `http://127.0.0.1:1/_storage/a.tar.gz?expires=1&signature=${enc(s)}` }) },
  { place: 'response body JSON text over the limit', holds: 'any', parts: (s) => ({ responseBody: `{"client_secret":${JSON.stringify(s)},"pad":"${'x'.repeat(BODY_LIMIT)}"}` }) },
  // Echoes: the request held it under a secret's name, the answer repeats it anywhere.
  { place: 'error body echoing a JSON field', holds: 'any', parts: (s) => ({ requestBody: { client_secret: s }, responseBody: JSON.stringify({ message: `client_secret ${s} is not valid`, errors: [{ value: s }] }) }) },
  { place: 'error body echoing the Authorization', holds: 'any', parts: (s) => ({ requestHeaders: { authorization: `Bearer ${s.replaceAll('\n', ' ')}` }, responseBody: { message: `Bad credentials: ${s.replaceAll('\n', ' ')}` } }) },
  { place: 'response header echoing a query secret', holds: 'any', parts: (s) => ({ query: { client_secret: s }, responseHeaders: { 'x-echo': s } }) },
  { place: 'response Location echoing a form secret', holds: 'any', parts: (s) => ({ requestBody: `password=${enc(s)}`, responseHeaders: { location: `http://127.0.0.1:1/next#${s}` } }) },
  { place: 'Basic secret echoed in the answer', holds: 'any', parts: (s) => ({ requestHeaders: { authorization: basic('Iv1.x', s) }, responseBody: { echoed: s } }) },
];

/** The server's own secrets: masked wherever they are (the journal's `knownSecrets`). */
const KNOWN = [ADMIN];

const partsOf = (parts: Parts) => ({ query: {}, requestHeaders: {}, requestBody: undefined, responseHeaders: {}, responseBody: undefined, ...parts });

test('every place × every kind: the secret is nowhere whole in the entry kept', () => {
  const failures: string[] = [];
  let cells = 0;
  for (const place of PLACES) {
    for (const kind of KINDS) {
      if (place.holds === 'shaped' && !kind.shaped && kind.value !== ADMIN) continue;
      cells++;
      const { parts } = maskedParts(KNOWN, partsOf(place.parts(kind.value)));
      const kept = JSON.stringify(parts);
      // Whole, or its body (a PEM block's), or percent-encoded: none of them.
      const forms = [kind.value, enc(kind.value), kind.value.split('\n')[1] ?? kind.value, kind.value.replaceAll('\n', ' ')];
      for (const form of forms) if (kept.includes(form) || kept.includes(JSON.stringify(form).slice(1, -1))) failures.push(`${place.place} × ${kind.name}: ${kept.slice(0, 400)}`);
      // A token shows its last four characters at most: never more of its end.
      if (!kind.value.includes('\n') && kept.includes(kind.value.slice(-5))) failures.push(`${place.place} × ${kind.name}: more than four last characters: ${kept.slice(0, 400)}`);
    }
  }
  assert.ok(cells > 400, `${cells} cells`);
  assert.deepEqual([...new Set(failures)], []);
});

test('what masking leaves: ordinary values, the scheme, Basic\'s user, a token\'s last four, the names', () => {
  const token = KINDS[0]!.value;
  assert.deepEqual(maskHeaders({ Authorization: `token ${token}`, Accept: 'application/json', 'X-Count': ['1', '2'], skipped: undefined }), {
    authorization: `token ${MASK}…${token.slice(-4)}`, accept: 'application/json', 'x-count': ['1', '2'],
  });
  assert.deepEqual(maskHeaders({ authorization: basic('mona', 'short') }), { authorization: `Basic mona:${MASK}` });
  assert.deepEqual(maskHeaders({ authorization: `Basic ${Buffer.from('no-colon-here').toString('base64')}` }), { authorization: `Basic ${MASK}` });
  assert.deepEqual(maskHeaders({ authorization: basic(token, 'x') }), { authorization: `Basic ${MASK}…${token.slice(-4)}:${MASK}` });
  assert.deepEqual(maskHeaders({ authorization: 'short' }), { authorization: MASK });
  assert.deepEqual(maskHeaders({ authorization: `  ${token}  ` }), { authorization: `${MASK}…${token.slice(-4)}` });
  assert.deepEqual(maskHeaders({ 'PROXY-AUTHORIZATION': 'Bearer abc' }), { 'proxy-authorization': `Bearer ${MASK}` });
  assert.deepEqual(maskHeaders({ cookie: 'a=b', 'set-cookie': ['c=d'], 'x-signature': 's', 'x-secret-thing': 1, 'x-token': 't' }), {
    cookie: MASK, 'set-cookie': MASK, 'x-signature': MASK, 'x-secret-thing': MASK, 'x-token': MASK,
  });
  assert.deepEqual(maskHeaders({ 'content-length': 12 }), { 'content-length': '12' });
  // Keys: a secret's value masked whatever its type but booleans, numbers and null; token_last_eight kept.
  assert.deepEqual(maskValue({ token: 'abc', secret: { nested: 1 }, has_secret: true, token_count: 3, password: null, token_last_eight: 'abcd1234', key: ['x'], code: 'c', sig: 's', credential: 'k', name: 'plain' }), {
    token: MASK, secret: MASK, has_secret: true, token_count: 3, password: null, token_last_eight: 'abcd1234', key: MASK, code: MASK, sig: MASK, credential: MASK, name: 'plain',
  });
  assert.deepEqual(maskValue({ keys: 'k', codes: 'c', signature_kind: 'x', designation: 'd', monkey: 'm' }), { keys: 'k', codes: 'c', signature_kind: MASK, designation: 'd', monkey: MASK });
  assert.equal(maskValue(`a ${token} b`), `a ${MASK}…${token.slice(-4)} b`);
  assert.equal(maskValue('chp_short'), 'chp_short');
  assert.equal(maskValue('plain text, no secret'), 'plain text, no secret');
  assert.equal(maskValue(7), 7);
  assert.equal(maskValue(null), null);
  assert.equal(maskValue(undefined), undefined);
  assert.deepEqual(maskValue(['a', { token: 'x' }]), ['a', { token: MASK }]);
  // A value nested deeper than 32 levels is masked whole.
  let deep: unknown = 'leaf';
  for (let i = 0; i < 40; i++) deep = { next: deep };
  assert.match(JSON.stringify(maskValue(deep)), /"next":"\[masked\]"/);
  let shallow: unknown = 'leaf';
  for (let i = 0; i < 32; i++) shallow = { next: shallow };
  assert.match(JSON.stringify(maskValue(shallow)), /"leaf"/);
});

test('texts: each shape of a secret in a text, and what is kept around it', () => {
  assert.equal(maskValue('a=1&client_secret=abc%20def&b=2'), `a=1&client_secret=${MASK}&b=2`);
  assert.equal(maskValue('?code=abc#frag'), `?code=${MASK}#frag`);
  assert.equal(maskValue('x?sig=abc&y=1'), `x?sig=${MASK}&y=1`);
  assert.equal(maskValue('x?design=abc'), 'x?design=abc');
  assert.equal(maskValue('{"client_secret": "abc\\"def", "n": 1}'), `{"client_secret": "${MASK}", "n": 1}`);
  assert.equal(maskValue('secret: plain value\nname: x'), `secret: ${MASK}\nname: x`);
  assert.equal(maskValue("secret: 'single'\n"), `secret: '${MASK}'\n`);
  assert.equal(maskValue('secret: "double"\n'), `secret: "${MASK}"\n`);
  assert.equal(maskValue('{secret: flow, name: x}'), `{secret: ${MASK}, name: x}`);
  assert.equal(maskValue('private_key: |\n  line one\n  line two\nname: x'), `private_key: ${MASK}\nname: x`);
  assert.equal(maskValue('-----BEGIN PRIVATE KEY-----\nabc\n-----END PRIVATE KEY----- after'), `${MASK} after`);
  assert.equal(maskValue('-----BEGIN PRIVATE KEY-----\ncut off'), MASK);
  assert.equal(maskValue('eyJa.eyJb.c'), MASK);
  // A bad percent-encoding is kept as it came (and masked).
  const seen: Seen = new Set();
  assert.equal(maskValue('client_secret=%E0%A4%A-bad-encoding', seen), `client_secret=${MASK}`);
  assert.deepEqual([...seen], ['%E0%A4%A-bad-encoding']);
});

test('seen: what a request held is masked wherever else it is; short values and the mask itself are not kept', () => {
  const seen: Seen = new Set();
  maskValue({ secret: 'long-enough-1', token: 'short', password: MASK }, seen);
  assert.deepEqual([...seen], ['long-enough-1']);
  assert.deepEqual(maskSeen({ a: ['x long-enough-1 y', 3, null], b: 'long-enough-1long-enough-1' }, seen), { a: [`x ${MASK} y`, 3, null], b: `${MASK}${MASK}` });
  assert.equal(maskSeen('nothing here', seen), 'nothing here');
  const none: Seen = new Set();
  const value = { a: 'long-enough-1' };
  assert.equal(maskSeen(value, none), value);
  // Deeper than 32 levels: left as it is (masked already by maskValue's own bound).
  let deep: unknown = 'long-enough-1';
  for (let i = 0; i < 40; i++) deep = [deep];
  assert.match(JSON.stringify(maskSeen(deep, seen)), /long-enough-1/);
  // Basic: the encoded credential and the password are both seen.
  const basicSeen: Seen = new Set();
  maskHeaders({ authorization: basic('user', 'the-password-1') }, basicSeen);
  assert.deepEqual([...basicSeen].sort(), [Buffer.from('user:the-password-1').toString('base64'), 'the-password-1'].sort());
  // A header named for a secret: every value seen.
  const headerSeen: Seen = new Set();
  maskHeaders({ 'set-cookie': ['session=aaaaaaaa', 'other=bbbbbbbb'] }, headerSeen);
  assert.deepEqual([...headerSeen], ['session=aaaaaaaa', 'other=bbbbbbbb']);
  // A YAML block's lines are each seen.
  const yamlSeen: Seen = new Set();
  maskValue('private_key: |\n  first-line-1\n  second-line-2\n', yamlSeen);
  assert.deepEqual([...yamlSeen], ['first-line-1', 'second-line-2']);
});

test('keptBody: nothing, bytes, a stream, JSON parsed, text kept, the limit', () => {
  assert.equal(keptBody(undefined), null);
  assert.equal(keptBody(null), null);
  assert.equal(keptBody(''), null);
  assert.equal(keptBody(Buffer.from('abc')), '(3 bytes)');
  assert.equal(keptBody({ pipe: () => {} }), '(a stream)');
  assert.deepEqual(keptBody({ pipe: 'not a function' }), { pipe: 'not a function' });
  assert.deepEqual(keptBody('{"a":1}'), { a: 1 });
  assert.equal(keptBody('not json'), 'not json');
  assert.equal(keptBody(0), 0);
  const long = 'y'.repeat(BODY_LIMIT + 10);
  assert.equal(keptBody(long), `${'y'.repeat(BODY_LIMIT)}… (10 more characters)`);
  assert.equal(keptBody('y'.repeat(BODY_LIMIT)), 'y'.repeat(BODY_LIMIT));
  const big = { list: 'z'.repeat(BODY_LIMIT) };
  const text = JSON.stringify(big);
  assert.equal(keptBody(big), `${text.slice(0, BODY_LIMIT)}… (${text.length - BODY_LIMIT} more characters)`);
  const fits = { list: 'z'.repeat(BODY_LIMIT - 11) };
  assert.equal(JSON.stringify(fits).length, BODY_LIMIT);
  assert.deepEqual(keptBody(fits), fits);
  // A long text is masked after it is cut; what a string body held is kept whole though it grew.
  assert.equal(keptBody(`client_secret=abc&${'q'.repeat(BODY_LIMIT)}`), `client_secret=${MASK}&${'q'.repeat(BODY_LIMIT - 18)}… (18 more characters)`);
  const grows = JSON.stringify({ token: [], pad: 'p'.repeat(BODY_LIMIT - 30) });
  assert.deepEqual(keptBody(grows), { token: MASK, pad: 'p'.repeat(BODY_LIMIT - 30) });
  // A string that is a JSON string: the text masked.
  assert.equal(keptBody(JSON.stringify('a chp_ClassicToken000000000000000000AbCd12')), `a ${MASK}…Cd12`);
});

test('maskedParts: the request masked first, its secrets then masked in the answer; the server\'s own everywhere', () => {
  const { seen, parts } = maskedParts([ADMIN], {
    query: { client_secret: 'query-secret-1', page: '2' },
    requestHeaders: { authorization: 'Bearer header-secret-1', accept: 'x' },
    requestBody: { password: 'body-secret-1', name: `n ${ADMIN}` },
    responseHeaders: { 'x-a': 'header-secret-1', 'x-b': 'query-secret-1', location: 'http://127.0.0.1/body-secret-1' },
    responseBody: { text: `${ADMIN} query-secret-1` },
  });
  assert.deepEqual([...seen].sort(), ['body-secret-1', 'header-secret-1', 'query-secret-1', ADMIN].sort());
  assert.deepEqual(parts, {
    query: { client_secret: `${MASK}…et-1`, page: '2' },
    request: { headers: { authorization: `Bearer ${MASK}…et-1`, accept: 'x' }, body: { password: `${MASK}…et-1`, name: `n ${MASK}` } },
    response: { headers: { 'x-a': MASK, 'x-b': MASK, location: `http://127.0.0.1/${MASK}` }, body: { text: `${MASK} ${MASK}` } },
  });
});

test('the edges: which keys are secrets, a token\'s length for its last four, the length kept in seen', () => {
  // Key names: `sig` and `code` alone, not inside a word.
  assert.deepEqual(maskValue({ xsig: 'v', sigil: 'v', zipcode: 'v', codes: 'v', Code: 'c', SIG: 's' }), { xsig: 'v', sigil: 'v', zipcode: 'v', codes: 'v', Code: MASK, SIG: MASK });
  // Twelve characters: masked whole; thirteen: the last four shown.
  assert.deepEqual(maskValue({ token: 'abcdefghijkl' }), { token: MASK });
  assert.deepEqual(maskValue({ token: 'abcdefghijklm' }), { token: `${MASK}…jklm` });
  // Eight characters are kept in seen, seven are not.
  const seen: Seen = new Set();
  maskValue({ secret: 'abcdefgh', password: 'abcdefg' }, seen);
  assert.deepEqual([...seen], ['abcdefgh']);
  // A secret key's array or object value: masked whole, whatever its length; nothing seen of it.
  const arraySeen: Seen = new Set();
  assert.deepEqual(maskValue({ secret: Array.from({ length: 13 }, () => 'a'), token: { a: 1 } }, arraySeen), { secret: MASK, token: MASK });
  assert.equal(arraySeen.size, 0);
});

test('the edges of texts: every match (g), any case (i), JSON across lines, YAML quotes, a `+` in a query', () => {
  assert.equal(maskValue('a?Client_Secret=one&TOKEN=two&x=1'), `a?Client_Secret=${MASK}&TOKEN=${MASK}&x=1`);
  assert.equal(maskValue('code=abcdef'), `code=${MASK}`);
  assert.equal(maskValue('{"Client_Secret":\n  "first-secret-value-1", "TOKEN":\n "second-secret-value-2"}'), `{"Client_Secret":\n  "${MASK}", "TOKEN":\n "${MASK}"}`);
  assert.equal(maskValue('Secret: one-yaml\nTOKEN: two-yaml\n'), `Secret: ${MASK}\nTOKEN: ${MASK}\n`);
  assert.equal(maskValue("secret: ab'cd\n"), `secret: ${MASK}\n`);
  assert.equal(maskValue('secret_key: abcdef'), `secret_key: ${MASK}`);
  assert.equal(maskValue('secret : abcdef'), `secret : ${MASK}`);
  const seenOf = (text: string) => {
    const seen: Seen = new Set();
    maskValue(text, seen);
    return [...seen];
  };
  assert.deepEqual(seenOf('secret: "quoted-secret-1"\n'), ['quoted-secret-1']);
  assert.deepEqual(seenOf("secret: \"it's-a-secret\"\n"), ["it's-a-secret"]);
  assert.deepEqual(seenOf('secret: plain\'s-secret-2\n'), ["plain's-secret-2"]);
  assert.deepEqual(seenOf('private_key: |-\n  line-one-1\n  line-two-2\n'), ['line-one-1', 'line-two-2']);
  assert.deepEqual(seenOf('a?client_secret=one+two+three'), ['one two three']);
});

test('the edges of Authorization: spaces between scheme and credential, a credential with spaces, Basic alone, the colon', () => {
  const echoed = (authorization: string, echo: string) => maskedParts([], { query: {}, requestHeaders: { authorization }, requestBody: undefined, responseHeaders: {}, responseBody: { echo } }).parts;
  assert.deepEqual(echoed('Bearer   opaque-secret-1', 'x opaque-secret-1').response.body, { echo: `x ${MASK}` });
  assert.deepEqual(echoed('token part-one part-two', 'x part-one part-two').response.body, { echo: `x ${MASK}` });
  const b64 = Buffer.from('user:password').toString('base64');
  for (const scheme of ['Basically', 'NotBasic']) assert.deepEqual(maskHeaders({ authorization: `${scheme} ${b64}` }), { authorization: `${scheme} ${MASK}…${b64.slice(-4)}` }, scheme);
  const seenOf = (decoded: string) => {
    const seen: Seen = new Set();
    const header = maskHeaders({ authorization: `Basic ${Buffer.from(decoded).toString('base64')}` }, seen);
    return { header: header.authorization, seen: [...seen].sort() };
  };
  assert.deepEqual(seenOf('nocolonvalue-1234'), { header: `Basic ${MASK}`, seen: [Buffer.from('nocolonvalue-1234').toString('base64')] });
  assert.deepEqual(seenOf(':password-12345'), { header: `Basic :${MASK}`, seen: [Buffer.from(':password-12345').toString('base64'), 'password-12345'].sort() });
});

test('the edges of depth and bodies: 32 levels kept, deeper masked (objects and arrays); arrays as bodies; a text that grows', () => {
  let objects: unknown = { a: 1 };
  for (let i = 0; i < 32; i++) objects = { next: objects };
  assert.match(JSON.stringify(maskValue(objects)), /\{"a":1\}/);
  let arrays: unknown = 'x';
  for (let i = 0; i < 40; i++) arrays = [arrays];
  assert.match(JSON.stringify(maskValue(arrays)), /\[masked\]/);
  const seen: Seen = new Set(['long-enough-1']);
  let seen32: unknown = 'long-enough-1';
  for (let i = 0; i < 32; i++) seen32 = [seen32];
  assert.doesNotMatch(JSON.stringify(maskSeen(seen32, seen)), /long-enough-1/);
  // 33 arrays: the innermost at depth 32, still looked into.
  assert.doesNotMatch(JSON.stringify(maskSeen([seen32], seen)), /long-enough-1/);
  let deepObjects: unknown = 'long-enough-1';
  for (let i = 0; i < 40; i++) deepObjects = { next: deepObjects };
  assert.match(JSON.stringify(maskSeen(deepObjects, seen)), /long-enough-1/);
  // An array body: kept as an array (not read as text); one too long to keep whole: cut as JSON.
  assert.deepEqual(keptBody([1]), [1]);
  assert.deepEqual(keptBody(['{"a":1}']), ['{"a":1}']);
  const many = Array.from({ length: BODY_LIMIT + 1 }, () => 1);
  const text = JSON.stringify(many);
  assert.equal(keptBody(many), `${text.slice(0, BODY_LIMIT)}… (${text.length - BODY_LIMIT} more characters)`);
  // A text within the limit is kept whole once masked, though masking made it longer than the limit.
  const grows = 'token=a&'.repeat(2000);
  assert.equal(keptBody(grows), `token=${MASK}&`.repeat(2000));
});
