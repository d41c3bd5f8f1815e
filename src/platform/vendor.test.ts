// The names that carry the vendor word (src/platform/vendor.ts): the spec's `Vendor`, and another.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { requestedApiVersion, vendorNames } from './vendor.ts';

test('vendorNames: every name carries the word, lowercase in header names; the spec\'s version header is always read', () => {
  assert.deepEqual(vendorNames('GitHub'), {
    word: 'GitHub',
    requestId: 'x-github-request-id',
    mediaType: 'x-github-media-type',
    mediaTypeValue: 'github.v3; format=json',
    apiVersion: ['x-github-api-version', 'x-vendor-api-version'],
    apiVersionSelected: 'x-github-api-version-selected',
    acceptedPermissions: 'x-accepted-github-permissions',
    hookshot: 'GitHub-Hookshot',
    delivery: {
      guid: 'x-github-delivery', event: 'x-github-event', hookId: 'x-github-hook-id',
      targetId: 'x-github-hook-installation-target-id', targetType: 'x-github-hook-installation-target-type',
    },
    written: {
      apiVersion: ['X-GitHub-Api-Version', 'X-Vendor-Api-Version'],
      exposed: ['X-GitHub-Request-Id', 'X-GitHub-Media-Type', 'X-GitHub-Api-Version-Selected', 'X-Accepted-GitHub-Permissions'],
    },
  });
  const spec = vendorNames('Vendor');
  assert.deepEqual(spec.apiVersion, ['x-vendor-api-version']);
  assert.deepEqual(spec.written.apiVersion, ['X-Vendor-Api-Version']);
  assert.equal(spec.delivery.event, 'x-vendor-event');
  assert.equal(spec.mediaTypeValue, 'vendor.v3; format=json');
});

test('requestedApiVersion: the word\'s header first, then the spec\'s; none is undefined', () => {
  const names = vendorNames('Acme');
  assert.equal(requestedApiVersion(names, { 'x-acme-api-version': 'a', 'x-vendor-api-version': 'b' }), 'a');
  assert.equal(requestedApiVersion(names, { 'x-vendor-api-version': 'b' }), 'b');
  assert.equal(requestedApiVersion(names, { 'x-other-api-version': 'c' }), undefined);
  assert.deepEqual(requestedApiVersion(names, { 'x-acme-api-version': ['a', 'a'] }), ['a', 'a']);
});
