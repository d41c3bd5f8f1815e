// Tables of code security; the migration is src/db/migrations/0004_code_security.ts.
import type { Generated } from 'kysely';

export interface CodeSecurityConfigurationsTable {
  id: Generated<number>;
  /** `global` (built-in, read-only), `enterprise` or `organization` */
  target_type: string;
  /** The owning organization (organization configurations). */
  org_id: number | null;
  /** The owning enterprise (enterprise configurations). */
  enterprise_id: number | null;
  name: string;
  /** Names are unique (case-insensitively) within their owner. */
  name_lower: string;
  description: string;
  /** JSON: the enablement fields and option objects (features.ts `Settings`). */
  settings: string;
  /** `enforced` or `unenforced` */
  enforcement: string;
  created_at: string;
  updated_at: string;
}

/** A repository's attachment to a configuration: at most one per repository. */
export interface CodeSecurityAttachmentsTable {
  repository_id: number;
  configuration_id: number;
  /** `attaching`, `updating` (waiting for the apply job), `attached`, `enforced` or `failed` */
  status: string;
  created_at: string;
  updated_at: string;
}

/** The configuration an organization or enterprise applies to its new repositories of one type. */
export interface CodeSecurityDefaultsTable {
  /** `organization` or `enterprise` */
  owner_type: string;
  owner_id: number;
  /** `public` or `private_and_internal` */
  repository_type: string;
  configuration_id: number;
}

/** Advanced-security licenses bought by an organization or enterprise (set on the operator surface). */
export interface CodeSecurityLicensesTable {
  owner_type: string;
  owner_id: number;
  advanced_security: number;
  updated_at: string;
}

/** A private or internal repository whose paid features use one license of an organization or enterprise. */
export interface CodeSecurityLicenseSeatsTable {
  repository_id: number;
  owner_type: string;
  owner_id: number;
  created_at: string;
}

export interface CodeSecurityTables {
  code_security_configurations: CodeSecurityConfigurationsTable;
  code_security_attachments: CodeSecurityAttachmentsTable;
  code_security_defaults: CodeSecurityDefaultsTable;
  code_security_licenses: CodeSecurityLicensesTable;
  code_security_license_seats: CodeSecurityLicenseSeatsTable;
}
