// What an app used: per credential (app, installation, token) in the journal, the scopes and
// permissions its calls' access rules actually required (each entry's `access.used`) beside what it
// held (`access.held`, the newest entry's), and what it held but never used: what its author can
// stop asking for. GET /_admin/requests/permissions-used (docs/testing.md "Verifying calls").
import type { Held, Needed } from '../core/access/index.ts';
import type { JournalEntry } from './journal-entry.ts';

type Level = 'read' | 'write';

export interface PermissionsUsed {
  credential: JournalEntry['credential'];
  /** Journal entries of this credential that an access rule checked. */
  requests: number;
  /** The scopes and permissions those calls needed: a permission at the highest level any call needed. */
  used: { scopes: string[]; permissions: Record<string, Level> };
  /** What the credential held (its newest entry's): a classic token's scopes, a fine-grained one's permissions. */
  granted: { kind: string | null; scopes?: string[]; permissions?: Record<string, Level> };
  /** Held but never needed: scopes to drop, and each permission at the level that would do (`none` or `read`). */
  unused: { scopes: string[]; permissions: Record<string, 'none' | 'read'> };
  /** Each operation called, with what it needed (null: nothing). */
  operations: Record<string, { calls: number; used: { scope: string } | { permissions: Record<string, Level> } | null }>;
  /** Operations an access rule refused this credential (403, or 404 for what it may not see), with what they needed: what to ask for, if the app means to call them. */
  refused: Record<string, { calls: number; reason: string; needed: Needed | null }>;
}

const keyOf = (credential: JournalEntry['credential']) =>
  `${credential.kind}|${credential.login}|${credential.app}|${credential.installation}|${credential.token_last_eight}`;

/** `entries` newest first (as the journal finds them). */
export function permissionsUsed(entries: readonly JournalEntry[]): PermissionsUsed[] {
  const groups = new Map<string, PermissionsUsed>();
  for (const entry of entries) {
    if (entry.credential.kind === null) continue;
    const held = entry.access?.held ?? (entry.explanation?.needed ? entry.explanation.held : undefined);
    if (!held) continue;
    const key = keyOf(entry.credential);
    let group = groups.get(key);
    if (!group) {
      groups.set(key, (group = { credential: entry.credential, requests: 0, used: { scopes: [], permissions: {} }, granted: grantedOf(held), unused: { scopes: [], permissions: {} }, operations: {}, refused: {} }));
    }
    if (!entry.access) {
      // Refused by an access rule: it needed what the explanation says, which the credential did not hold.
      const refused = (group.refused[entry.operation ?? `${entry.method} ${entry.path}`] ??= { calls: 0, reason: entry.explanation!.reason, needed: entry.explanation!.needed ?? null });
      refused.calls++;
      continue;
    }
    group.requests++;
    const used = entry.access.used;
    const operation = (group.operations[entry.operation ?? `${entry.method} ${entry.path}`] ??= { calls: 0, used: null });
    operation.calls++;
    if (used === null) continue;
    if ('scope' in used) {
      if (!group.used.scopes.includes(used.scope)) group.used.scopes.push(used.scope);
    } else {
      for (const [name, level] of Object.entries(used.permissions)) {
        if (group.used.permissions[name] !== 'write') group.used.permissions[name] = level;
      }
    }
    operation.used = mostOf(operation.used, used);
  }
  for (const group of groups.values()) {
    group.used.scopes.sort();
    group.unused.scopes = (group.granted.scopes ?? []).filter((scope) => !group.used.scopes.includes(scope));
    for (const [name, level] of Object.entries(group.granted.permissions ?? {})) {
      const needed = group.used.permissions[name];
      if (!needed) group.unused.permissions[name] = 'none';
      else if (level === 'write' && needed === 'read') group.unused.permissions[name] = 'read';
    }
  }
  return [...groups.values()];
}

function grantedOf(held: Held): PermissionsUsed['granted'] {
  return { kind: held.kind, ...(held.scopes ? { scopes: [...held.scopes] } : {}), ...(held.permissions ? { permissions: { ...held.permissions } } : {}) };
}

type Used = PermissionsUsed['operations'][string]['used'];

/** The greater of two needs of one operation (a write over a read; the first scope seen). */
function mostOf(before: Used, now: NonNullable<Used>): Used {
  if (before === null || 'scope' in before || 'scope' in now) return before ?? now;
  const out = { ...before.permissions };
  for (const [name, level] of Object.entries(now.permissions)) if (out[name] !== 'write') out[name] = level;
  return { permissions: out };
}
