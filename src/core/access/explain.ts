// Why a request was refused, and what its access rule required: recorded beside the request (never
// in the answer) for the test double's journal (src/testing/journal.ts, docs/testing.md "Reading
// warnings"). A refused credential carries its reason on the error it throws (`explained`), which
// the caller hook copies to `request.explanation`; a decision on a target (a repository, an
// organization) is written on the request's principal, which lives as long as the request.
import type { Permissions } from './permissions.ts';

/** Why a credential or a decision refused the request. */
export type RefusalReason =
  | 'unknown_credential' | 'expired_credential' | 'suspended_user' | 'suspended_installation' | 'invalid_jwt'
  | 'authentication_required' | 'credential_not_accepted' | 'scope_missing' | 'permission_missing'
  | 'repository_not_reached' | 'account_not_reached' | 'role_missing' | 'not_readable';

/** What an operation needs of a caller: any one of the scopes, any one of the permission sets, one of the roles. */
export interface Needed {
  credentials?: string[];
  scopes?: string[];
  permissions?: Permissions[];
  roles?: string[];
}

/** What the caller held: a classic token's scopes, a fine-grained credential's permissions (where it acted), a user's role. */
export interface Held {
  kind: string | null;
  scopes?: string[];
  permissions?: Permissions;
  /** A user's role on the repository (`admin`, `maintain`, `write`, `triage`, `read`, none) or in the organization. */
  role?: string | null;
  roles?: string[];
}

export interface Explanation {
  reason: RefusalReason;
  message: string;
  /** A refused credential: its kind and, for an expired one, when it expired. */
  credential?: { kind: string | null; token_last_eight?: string | null; expired_at?: string | null };
  needed?: Needed;
  held?: Held;
}

/** What the access rule that applied actually required of the caller: a scope, or a permission set; null where nothing was required (a public read). */
export type Used = { scope: string } | { permissions: Permissions } | null;

/** The per-request notes a principal carries (the anonymous caller's are the request's own copy). */
export interface AccessNotes {
  explanation?: Explanation;
  used?: Used;
}

/** An error that says why (the answer stays the platform's: only `explanation` is added, read by the journal). */
export function explained<E extends Error>(error: E, explanation: Explanation): E {
  Object.defineProperty(error, 'explanation', { value: explanation, enumerable: false });
  return error;
}

export function explanationOfError(error: unknown): Explanation | undefined {
  return (error as { explanation?: Explanation } | null)?.explanation;
}

/** Writes a decision's explanation on the principal (a no-op on a shared principal: frozen). */
export function note(principal: object, explanation: Explanation): void {
  if (!Object.isFrozen(principal)) (principal as AccessNotes).explanation = explanation;
}

export function noteUsed(principal: object, used: Used): void {
  if (!Object.isFrozen(principal)) (principal as AccessNotes).used = used;
}
