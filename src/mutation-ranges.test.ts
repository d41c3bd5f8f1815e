// The line ranges that stryker.config.json mutates, checked against the code: each range is named here
// by the declarations it starts and ends with, so a rebase that moves the lines fails this test (with
// the ranges to write) instead of leaving Stryker to mutate whatever lines now sit there.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';

const root = join(import.meta.dirname, '..');

/**
 * What `mutate` holds, in its order: a whole file, or the declarations from `first` through `last`
 * (top-level ones, or a statement inside one, named with its indentation, such as a hook installed
 * in a function).
 */
const TARGETS: readonly (string | { file: string; first: string; last: string })[] = [
  'src/platform/tokens.ts',
  { file: 'src/core/access/repository-permissions.ts', first: 'const NONE', last: 'export async function userRepositoryPermissions' },
  'src/platform/errors.ts',
  { file: 'src/http/version.ts', first: 'export function selectApiVersion', last: 'export function selectApiVersion' },
  { file: 'src/http/input.ts', first: 'export function queryBoolean', last: 'export function booleanQueryKeys' },
  { file: 'src/http/conditional.ts', first: 'export function unchanged', last: 'export function answerNotModified' },
  { file: 'src/http/conditional.ts', first: 'export function conditionalAnswer', last: 'export function conditionalAnswer' },
  'src/platform/rate-limit.ts',
  { file: 'src/core/access/access.ts', first: 'const IMPLIED_SCOPES', last: 'export async function requirePermittedOn' },
  { file: 'src/core/access/access.ts', first: 'export async function reachesRepository', last: 'export async function requireAccess' },
  'src/core/access/app.ts',
  { file: 'src/core/access/hook.ts', first: 'export function callerResolution', last: 'export function rateLimitKey' },
  { file: 'src/core/access/principal.ts', first: 'export async function principalFromToken', last: 'export async function authenticate' },
  { file: 'src/core/access/store.ts', first: 'export async function issueToken', last: 'export async function deleteExpiredTokens' },
  { file: 'src/core/access/store.ts', first: 'const MEMBER_ROLES', last: 'export async function readersOf' },
  { file: 'src/core/repositories/list-store.ts', first: 'const TRUE', last: 'export async function repositoryPage' },
  { file: 'src/areas/app-webhooks/engine.ts', first: 'export function requestBody', last: 'export function buildRequest' },
  { file: 'src/areas/app-webhooks/engine.ts', first: 'export const subscribes', last: 'export function storedPayloads' },
  { file: 'src/areas/app-webhooks/engine.ts', first: 'export const isFailure', last: 'export function retryDelay' },
  { file: 'src/areas/app-webhooks/engine.ts', first: 'export function droppedBecause', last: 'export function droppedBecause' },
  { file: 'src/areas/notifications/service.ts', first: 'function storedTime', last: 'export function threadFilter' },
  { file: 'src/areas/notifications/store.ts', first: 'function pageStatement', last: 'function pageStatement' },
  'src/areas/notifications/reasons.ts',
  { file: 'src/areas/notifications/fan-out.ts', first: 'class NotificationFanOut', last: 'export const notificationHandlers' },
  { file: 'src/core/apps/writes.ts', first: '  async suspend', last: '  private async change' },
  { file: 'src/core/apps/store.ts', first: 'export async function setInstallationSuspended', last: 'export async function deleteInstallation' },
  { file: 'src/core/accounts/writes.ts', first: '  async suspend', last: '  async unsuspend' },
  { file: 'src/core/repositories/writes.ts', first: '  async updateRepository', last: '  async updateRepository' },
  { file: 'src/core/repositories/store.ts', first: 'export async function dropFormerName', last: 'export async function detachFromOwner' },
  { file: 'src/core/repositories/owner-writes.ts', first: '  async deleteUser', last: '  async deleteUser' },
  { file: 'src/core/accounts/store.ts', first: 'export async function solelyOwnedOrganizations', last: 'export async function reassignAuthorship' },
  { file: 'src/areas/updater-access/service.ts', first: '  async onTransferred', last: '  async onTransferred' },
  { file: 'src/areas/updater-access/store.ts', first: 'export async function dropFromListsOutOfReach', last: 'export async function dropFromListsOutOfReach' },
  { file: 'src/areas/code-security/service.ts', first: '  async attachDefault', last: '  async onTransferred' },
  { file: 'src/areas/user-migrations/service.ts', first: '  async refuseLockedMove', last: '  async refuseLockedMove' },
  { file: 'src/areas/user-migrations/store.ts', first: 'export async function repositoryLock', last: 'export async function repositoryLock' },
  'src/testing/masking.ts',
  { file: 'src/testing/journal.ts', first: 'function matcher', last: 'export class Journal' },
  'src/testing/permissions-used.ts',
  'src/testing/clock.ts',
  { file: 'src/platform/clock.ts', first: 'export class Clock', last: 'export class Clock' },
  { file: 'src/testing/support.ts', first: 'export function memoryOf', last: 'export function setMemory' },
  { file: 'src/testing/support.ts', first: 'export function listedSnapshots', last: 'export function resetRequest' },
  'src/config/refusals.ts',
  { file: 'src/config/parse.ts', first: 'export function bool', last: 'export function bool' },
  { file: 'src/config/parse.ts', first: 'const HOST_NAME', last: 'export function mode' },
  { file: 'src/config/parse.ts', first: 'export function bearerToken', last: 'export function bearerToken' },
  { file: 'src/config/parse.ts', first: 'const PROXY_RANGE_NAMES', last: 'export function trustProxy' },
  { file: 'src/config/settings.ts', first: '  const webSet', last: '  const allowPrivate' },
  { file: 'src/areas/user-migrations/service.ts', first: 'const DAY_MS', last: 'export function ownedBy' },
  { file: 'src/areas/user-migrations/store.ts', first: 'export async function countExportsInProgress', last: 'export async function lockRepositories' },
  { file: 'src/areas/user-migrations/store.ts', first: 'export async function unlockRepository', last: 'export async function lockedRepositories' },
  { file: 'src/areas/user-migrations/store.ts', first: 'export async function beginExport', last: 'export async function expiredArchives' },
];

/** The line (1-based) that starts with `declaration`; there must be exactly one. */
function lineOf(lines: readonly string[], file: string, declaration: string): number {
  const found = lines.flatMap((line, i) => (line.startsWith(declaration) && /^[^\w$]/.test(line.slice(declaration.length)) ? [i + 1] : []));
  assert.equal(found.length, 1, `${file}: one line starts with ${JSON.stringify(declaration)}`);
  return found[0]!;
}

/**
 * The last line of the declaration or statement that starts at `start`: the first line at its
 * indentation that closes it (`}`, `});`) or ends with `;`.
 */
function endOf(lines: readonly string[], start: number): number {
  const indent = /^\s*/.exec(lines[start - 1]!)![0];
  for (let n = start; n <= lines.length; n++) {
    const line = lines[n - 1]!;
    if (!line.startsWith(indent) || /^\s/.test(line.slice(indent.length))) continue;
    const code = line.slice(indent.length);
    if (code === '}' || code.endsWith(';')) return n;
  }
  throw new Error(`no end after line ${start}`);
}

test('stryker.config.json mutates the declarations it is meant to (line ranges follow the code)', () => {
  const config = JSON.parse(readFileSync(join(root, 'stryker.config.json'), 'utf8')) as { mutate: string[] };
  const expected = TARGETS.map((target) => {
    if (typeof target === 'string') {
      readFileSync(join(root, target));
      return target;
    }
    const lines = readFileSync(join(root, target.file), 'utf8').split('\n');
    const first = lineOf(lines, target.file, target.first);
    const last = endOf(lines, lineOf(lines, target.file, target.last));
    assert.ok(first <= last, `${target.file}: ${target.first} comes before the end of ${target.last}`);
    return `${target.file}:${first}-${last}`;
  });
  assert.deepEqual(config.mutate, expected);
});

test('every test file Stryker runs exists and is a unit test beside the code', () => {
  const config = JSON.parse(readFileSync(join(root, 'stryker.config.json'), 'utf8')) as { tap: { testFiles: string[] } };
  for (const file of config.tap.testFiles) {
    assert.match(file, /^src\/.+\.test\.ts$/);
    readFileSync(join(root, file));
  }
});
