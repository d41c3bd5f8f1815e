// The response shape of issue types: an organization's type, as seen from the organization or from
// one of its repositories (where the repository may disable it).
import type { Selectable } from 'kysely';
import { Type, type Static, type TSchema } from 'typebox';
import type { IssueTypesTable } from '../../db/tables/issue-types.ts';
import { isoSeconds } from '../../platform/clock.ts';
import { nodeId } from '../../platform/urls.ts';

export type IssueTypeRow = Selectable<IssueTypesTable>;

export const COLORS = ['gray', 'blue', 'green', 'yellow', 'orange', 'red', 'pink', 'purple'] as const;
export const Color = Type.Union(COLORS.map((c) => Type.Literal(c)), { description: 'The color shown with the type' });
export const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

export const IssueType = Type.Object({
  id: Type.Integer(),
  node_id: Type.String(),
  name: Type.String(),
  description: Nullable(Type.String()),
  color: Nullable(Color),
  is_enabled: Type.Boolean(),
  created_at: Type.String(),
  updated_at: Type.String(),
});
export type IssueType = Static<typeof IssueType>;

export function issueTypeBody(row: IssueTypeRow, enabled = Boolean(row.is_enabled)): IssueType {
  return {
    id: row.id,
    node_id: nodeId('IssueType', row.id),
    name: row.name,
    description: row.description,
    color: row.color as IssueType['color'],
    is_enabled: enabled,
    created_at: isoSeconds(row.created_at),
    updated_at: isoSeconds(row.updated_at),
  };
}
