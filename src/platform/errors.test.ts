// The platform's error bodies and the helpers that make them, on their own (no server): each status,
// message, field and header as a client reads it.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  ApiError, accountSuspended, documentationUrl, badCredentials, badRequest, conflict, forbidden, insertUnique, invalidField,
  installationSuspended, isUniqueViolation, notFound, requiresAuthentication, serviceUnavailable, validationFailed,
} from './errors.ts';

const REFERENCE = 'https://code.example.com/docs';

test('ApiError: status, message, options and a body in the platform\'s order', () => {
  const plain = new ApiError(418, 'short');
  assert.ok(plain instanceof Error);
  assert.equal(plain.status, 418);
  assert.equal(plain.message, 'short');
  assert.equal(plain.errors, undefined);
  assert.equal(plain.headers, undefined);
  assert.equal(plain.extra, undefined);
  assert.deepEqual(plain.body(REFERENCE), { message: 'short', documentation_url: REFERENCE, status: '418' });
  assert.deepEqual(Object.keys(plain.body(REFERENCE)), ['message', 'documentation_url', 'status']);

  const errors = [{ resource: 'Issue', field: 'title', code: 'missing_field' as const }];
  const full = new ApiError(422, 'Validation Failed', { errors, headers: { 'retry-after': '1' }, extra: { block: { reason: 'x' } } });
  assert.deepEqual(full.errors, errors);
  assert.deepEqual(full.headers, { 'retry-after': '1' });
  assert.deepEqual(full.extra, { block: { reason: 'x' } });
  assert.deepEqual(full.body(REFERENCE), {
    message: 'Validation Failed', errors, block: { reason: 'x' }, documentation_url: REFERENCE, status: '422',
  });
  assert.deepEqual(Object.keys(full.body(REFERENCE)), ['message', 'errors', 'block', 'documentation_url', 'status']);
  // `extra` cannot replace the documentation link or the status.
  const sneaky = new ApiError(400, 'm', { extra: { status: '200', documentation_url: 'x' } });
  assert.equal(sneaky.body(REFERENCE).status, '400');
  assert.equal(sneaky.body(REFERENCE).documentation_url, REFERENCE);
});

test('documentationUrl: the reference, at the operation\'s anchor where the reference shows the operation', () => {
  const operation = { tags: ['code-security', 'other'], operationId: 'code-security/create-configuration' };
  // Swagger UI's deep link, each part URI-encoded: the `/` of the operation id is %2F.
  assert.equal(documentationUrl(REFERENCE, operation), `${REFERENCE}#/code-security/code-security%2Fcreate-configuration`);
  assert.equal(documentationUrl(REFERENCE, { tags: ['a b'], operationId: 'x?y' }), `${REFERENCE}#/a%20b/x%3Fy`);
  // No operation, a hidden one, one without a tag or without an id: the reference itself.
  assert.equal(documentationUrl(REFERENCE), REFERENCE);
  assert.equal(documentationUrl(REFERENCE, { ...operation, hide: true }), REFERENCE);
  assert.equal(documentationUrl(REFERENCE, { ...operation, hide: false }), `${REFERENCE}#/code-security/code-security%2Fcreate-configuration`);
  assert.equal(documentationUrl(REFERENCE, { operationId: 'x/y' }), REFERENCE);
  assert.equal(documentationUrl(REFERENCE, { tags: [], operationId: 'x/y' }), REFERENCE);
  assert.equal(documentationUrl(REFERENCE, { tags: [''], operationId: 'x/y' }), REFERENCE);
  assert.equal(documentationUrl(REFERENCE, { tags: ['x'] }), REFERENCE);
  assert.equal(documentationUrl(REFERENCE, { tags: ['x'], operationId: '' }), REFERENCE);
});

test('the named errors: status and message of each', () => {
  const cases: [ApiError, number, string][] = [
    [notFound(), 404, 'Not Found'],
    [notFound('Branch not found'), 404, 'Branch not found'],
    [forbidden('no'), 403, 'no'],
    [conflict('taken'), 409, 'taken'],
    [badRequest('bad'), 400, 'bad'],
    [requiresAuthentication(), 401, 'Requires authentication'],
    [badCredentials(), 401, 'Bad credentials'],
    [accountSuspended(), 403, 'Sorry. Your account was suspended.'],
    [installationSuspended(), 403, 'This installation has been suspended'],
  ];
  for (const [error, status, message] of cases) {
    assert.ok(error instanceof ApiError);
    assert.equal(error.status, status, message);
    assert.equal(error.message, message);
    assert.equal(error.errors, undefined);
    assert.equal(error.headers, undefined);
  }
  const unavailable = serviceUnavailable();
  assert.equal(unavailable.status, 503);
  assert.equal(unavailable.message, 'Service Unavailable: the database cannot be reached right now; try again shortly.');
  assert.deepEqual(unavailable.headers, { 'retry-after': '5' });
});

test('validationFailed and invalidField: a 422 with its errors, the code from the message', () => {
  const errors = [{ resource: 'Label', field: 'name', code: 'invalid' as const }];
  const failed = validationFailed(errors);
  assert.equal(failed.status, 422);
  assert.equal(failed.message, 'Validation Failed');
  assert.deepEqual(failed.errors, errors);
  assert.equal(validationFailed(errors, 'Other').message, 'Other');

  const bare = invalidField('Issue', 'state');
  assert.equal(bare.status, 422);
  assert.equal(bare.message, 'Validation Failed');
  assert.deepEqual(bare.errors, [{ resource: 'Issue', field: 'state', code: 'invalid' }]);
  assert.deepEqual(Object.keys(bare.errors![0]!), ['resource', 'field', 'code']);

  const said = invalidField('Issue', 'state', 'must be open or closed');
  assert.deepEqual(said.errors, [{ resource: 'Issue', field: 'state', code: 'custom', message: 'must be open or closed' }]);
  assert.deepEqual(invalidField('Issue', 'state', 'why', 'missing').errors, [{ resource: 'Issue', field: 'state', code: 'missing', message: 'why' }]);
  assert.deepEqual(invalidField('Issue', 'state', undefined, 'already_exists').errors, [{ resource: 'Issue', field: 'state', code: 'already_exists' }]);
  assert.deepEqual(invalidField('Issue', 'state', '').errors, [{ resource: 'Issue', field: 'state', code: 'invalid' }]);
});

test('isUniqueViolation: PostgreSQL\'s 23505 and SQLite\'s message, nothing else', () => {
  assert.equal(isUniqueViolation({ code: '23505' }), true);
  assert.equal(isUniqueViolation(Object.assign(new Error('x'), { code: '23505' })), true);
  assert.equal(isUniqueViolation(new Error('UNIQUE constraint failed: users.login')), true);
  assert.equal(isUniqueViolation(new Error('SQLITE_CONSTRAINT: UNIQUE constraint failed: a.b')), true);
  assert.equal(isUniqueViolation({ code: '23503' }), false);
  assert.equal(isUniqueViolation({ errcode: '23505' }), false);
  assert.equal(isUniqueViolation(new Error('NOT NULL constraint failed: users.login')), false);
  assert.equal(isUniqueViolation(new Error('unique constraint failed')), false);
  assert.equal(isUniqueViolation({}), false);
  assert.equal(isUniqueViolation(null), false);
  assert.equal(isUniqueViolation(undefined), false);
});

test('insertUnique: the value, a 422 already_exists for a duplicate, other errors unchanged', async () => {
  assert.equal(await insertUnique('Label', 'name', async () => 7), 7);
  await assert.rejects(insertUnique('Label', 'name', async () => { throw new Error('UNIQUE constraint failed: labels.name'); }), (error) => {
    assert.ok(error instanceof ApiError);
    assert.equal(error.status, 422);
    assert.equal(error.message, 'Validation Failed');
    assert.deepEqual(error.errors, [{ resource: 'Label', field: 'name', code: 'already_exists' }]);
    return true;
  });
  const other = new Error('disk full');
  await assert.rejects(insertUnique('Label', 'name', async () => { throw other; }), (error) => error === other);
});
