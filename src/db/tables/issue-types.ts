// Tables of issue types; the migration is src/db/migrations/0006_issue_types.ts.
import type { Generated } from 'kysely';
import type { Bool } from './columns.ts';

/**
 * An organization's issue type. Other areas look a type up by `org_id` and `name` (and check
 * `is_enabled`) directly, so those columns keep these names.
 */
export interface IssueTypesTable {
  id: Generated<number>;
  org_id: number;
  name: string;
  /** Names are unique within the organization, whatever their case. */
  name_lower: string;
  description: string | null;
  /** `gray`, `blue`, `green`, `yellow`, `orange`, `red`, `pink`, `purple`, or null. */
  color: string | null;
  is_enabled: Bool;
  created_at: string;
  updated_at: string;
}

/** A repository's override: the type is not available in that repository (set on the operator surface). */
export interface IssueTypeDisabledRepositoriesTable {
  issue_type_id: number;
  repository_id: number;
  created_at: string;
}

export interface IssueTypeTables {
  issue_types: IssueTypesTable;
  issue_type_disabled_repositories: IssueTypeDisabledRepositoriesTable;
}
