// What the request journal keeps of one request (docs/testing.md "Verifying calls"): read by the
// journal, its routes and the sums over it (permissions-used.ts).
import type { Explanation, Held, Used } from '../core/access/index.ts';
import type { InjectedFault } from './faults.ts';

export interface JournalWarning {
  code: 'unknown_query_parameter' | 'unknown_body_field' | 'missing_api_version' | 'per_page_clamped' | 'unserved_operation' | 'injected_fault';
  message: string;
}

export interface JournalEntry {
  id: number;
  at: string;
  method: string;
  path: string;
  query: Record<string, unknown>;
  operation: string | null;
  /** Who called: for a refused credential, what it claimed to be (`explanation` says why). `token_last_eight`: the token's, as the fault rules name it. */
  credential: { kind: string | null; login: string | null; app: string | null; installation: number | null; token_last_eight: string | null };
  /**
   * What the platform API's access rule that applied required of the caller (`used`: `{scope}`, a
   * classic or OAuth token's scope; `{permissions}`, the permission set a fine-grained credential
   * used; null: nothing, as a public read) beside what it held (`held`: scopes or permissions).
   * Null where no access rule applied (operator and meta requests, unserved routes, a refused credential).
   */
  access: { used: Used; held: Held } | null;
  /** Why the request was refused, where an access check said: `{reason, message, credential?, needed?, held?}` (docs/testing.md "Reading warnings"). */
  explanation: Explanation | null;
  /** The fault rule that answered (or delayed) the request: its id, effect and match. */
  fault: InjectedFault | null;
  status: number;
  duration_ms: number;
  request: { headers: Record<string, unknown>; body: unknown };
  response: { headers: Record<string, unknown>; body: unknown };
  warnings: JournalWarning[];
}
