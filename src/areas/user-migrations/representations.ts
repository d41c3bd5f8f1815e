// The response shape of user migrations: a migration as its owner sees it (timestamps with a
// numeric offset, as the spec gives them).
import { Type, type Static } from 'typebox';
import type { UserRow } from '../../core/accounts/store.ts';
import { SimpleUser, simpleUser } from '../../core/accounts/representations.ts';
import { FullRepository } from '../../core/repositories/representations.ts';
import { isoSeconds } from '../../platform/clock.ts';
import { nodeId, type Urls } from '../../platform/urls.ts';
import type { MigrationRow } from './store.ts';

const STATES = ['pending', 'exporting', 'exported', 'failed'] as const;

export const UserMigration = Type.Object({
  id: Type.Integer(),
  node_id: Type.String(),
  owner: SimpleUser,
  guid: Type.String(),
  state: Type.Union(STATES.map((s) => Type.Literal(s))),
  lock_repositories: Type.Boolean(),
  exclude_metadata: Type.Boolean(),
  exclude_git_data: Type.Boolean(),
  exclude_attachments: Type.Boolean(),
  exclude_releases: Type.Boolean(),
  exclude_owner_projects: Type.Boolean(),
  org_metadata_only: Type.Boolean(),
  repositories: Type.Optional(Type.Array(FullRepository)),
  url: Type.String(),
  archive_url: Type.String(),
  /** The attributes left out of this response. */
  exclude: Type.Optional(Type.Array(Type.String())),
  created_at: Type.String({ description: 'ISO 8601 with a numeric time-zone offset' }),
  updated_at: Type.String({ description: 'ISO 8601 with a numeric time-zone offset' }),
});
export type UserMigration = Static<typeof UserMigration>;

/** The spec gives migration timestamps with a numeric offset (`+00:00`) rather than `Z`. */
const isoOffset = (value: string) => isoSeconds(value).replace(/Z$/, '+00:00');

export function migrationBody(urls: Urls, row: MigrationRow, owner: UserRow, repositories: FullRepository[] | null): UserMigration {
  const url = `${urls.api}/user/migrations/${row.id}`;
  return {
    id: row.id,
    node_id: nodeId('Migration', row.id),
    owner: simpleUser(urls, owner),
    guid: row.guid,
    state: row.state as UserMigration['state'],
    lock_repositories: Boolean(row.lock_repositories),
    exclude_metadata: Boolean(row.exclude_metadata),
    exclude_git_data: Boolean(row.exclude_git_data),
    exclude_attachments: Boolean(row.exclude_attachments),
    exclude_releases: Boolean(row.exclude_releases),
    exclude_owner_projects: Boolean(row.exclude_owner_projects),
    org_metadata_only: Boolean(row.org_metadata_only),
    ...(repositories ? { repositories } : { exclude: ['repositories'] }),
    url,
    archive_url: `${url}/archive`,
    created_at: isoOffset(row.created_at),
    updated_at: isoOffset(row.updated_at),
  };
}
