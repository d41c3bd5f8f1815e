// Tables of the apps: apps, their installations, users' authorizations and every kind of token.
import type { Generated } from 'kysely';

export interface AppsTable {
  id: Generated<number>;
  slug: string;
  name: string;
  owner_id: number | null;
  client_id: string;
  /** SHA-256 of the client secret, base64. The secret itself is shown once at creation. */
  client_secret_hash: string;
  /** The public half of the app's RS256 key pair; the private key is shown once and never stored. */
  public_key_pem: string;
  permissions: string;
  events: string;
  created_at: string;
  updated_at: string;
}

export interface InstallationsTable {
  id: Generated<number>;
  app_id: number;
  account_id: number;
  /** `all` or `selected` */
  repository_selection: string;
  permissions: string;
  created_at: string;
  updated_at: string;
  /** Set while suspended: its tokens are refused (403), none is minted, nothing is delivered for it. */
  suspended_at: string | null;
}

export interface InstallationRepositoriesTable {
  installation_id: number;
  repository_id: number;
}

/** A user's grant to an app: deleting it revokes every token of that app for that user. */
export interface AppAuthorizationsTable {
  id: Generated<number>;
  app_id: number;
  user_id: number;
  scopes: string;
  note: string | null;
  note_url: string | null;
  created_at: string;
  updated_at: string;
}

export interface TokensTable {
  id: Generated<number>;
  /** `classic`, `fine_grained`, `oauth`, `app_user` or `installation` */
  kind: string;
  /** base64 SHA-256 of the token: the only form in which a token is stored. */
  hashed_token: string;
  token_last_eight: string;
  user_id: number | null;
  app_id: number | null;
  installation_id: number | null;
  authorization_id: number | null;
  scopes: string;
  permissions: string;
  /** Fine-grained personal tokens: the account whose resources the token reaches. */
  resource_owner_id: number | null;
  /** `all` or `selected` (with `repository_ids`), for fine-grained and installation tokens. */
  repository_selection: string;
  repository_ids: string;
  note: string | null;
  note_url: string | null;
  fingerprint: string | null;
  expires_at: string | null;
  created_at: string;
  updated_at: string;
}

export interface AppTables {
  apps: AppsTable;
  installations: InstallationsTable;
  installation_repositories: InstallationRepositoriesTable;
  app_authorizations: AppAuthorizationsTable;
  tokens: TokensTable;
}
