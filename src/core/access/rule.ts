// What a route accepts, declared once beside it: the credential kinds, the scopes and the
// fine-grained permission sets. The request hook checks it (./access.ts `checkRule`) and announces it
// in the `X-Accepted-*` headers; the principal carries it, so a check on an account or repository can
// ask whether a token holds it there.
import type { TokenKind } from '../../platform/tokens.ts';
import type { Permissions } from './permissions.ts';

/** A credential kind an endpoint may accept: the five token kinds, an app JWT, or Basic client credentials. */
export type CredentialKind = TokenKind | 'jwt' | 'basic';

export interface AccessRule {
  /** Credential kinds the endpoint accepts. */
  credentials: readonly CredentialKind[];
  /** Answer without credentials too (public resources). */
  anonymous?: boolean;
  /** Classic and OAuth scopes, any one of which suffices (implied scopes count). */
  scopes?: readonly string[];
  /** Fine-grained permission sets, any one of which suffices. */
  permissions?: readonly Permissions[];
  /**
   * The scopes and permissions are needed only on a private or internal repository: a public one is
   * read by anyone the rule admits. The request hook announces them; `requireReadableRepository`
   * checks them once the repository is known.
   */
  privateOnly?: boolean;
}

export const USER_TOKENS = ['classic', 'oauth', 'fine_grained', 'app_user'] as const satisfies readonly CredentialKind[];
export const ALL_TOKENS = [...USER_TOKENS, 'installation'] as const satisfies readonly CredentialKind[];
export const CLASSIC_TOKENS = ['classic', 'oauth'] as const satisfies readonly CredentialKind[];
