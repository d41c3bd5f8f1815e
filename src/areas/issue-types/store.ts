// SQL of issue types.
import type { Insertable, Updateable } from 'kysely';
import type { Executor } from '../../db/index.ts';
import type { IssueTypesTable } from '../../db/tables/issue-types.ts';

export async function listForOrganization(db: Executor, orgId: number) {
  return db.selectFrom('issue_types').selectAll().where('org_id', '=', orgId).orderBy('id').execute();
}

export async function findById(db: Executor, orgId: number, id: number) {
  return db.selectFrom('issue_types').selectAll().where('org_id', '=', orgId).where('id', '=', id).executeTakeFirst();
}

export async function findByName(db: Executor, orgId: number, name: string) {
  return db.selectFrom('issue_types').selectAll().where('org_id', '=', orgId).where('name_lower', '=', name.toLowerCase()).executeTakeFirst();
}

export async function insert(db: Executor, values: Insertable<IssueTypesTable>) {
  return db.insertInto('issue_types').values(values).returningAll().executeTakeFirstOrThrow();
}

/** The row as updated; undefined when it is gone (deleted since it was read). */
export async function update(db: Executor, id: number, values: Updateable<IssueTypesTable>) {
  return db.updateTable('issue_types').set(values).where('id', '=', id).returningAll().executeTakeFirst();
}

export async function remove(db: Executor, id: number): Promise<void> {
  await db.deleteFrom('issue_types').where('id', '=', id).execute();
}

/** Ids of the organization's types that a repository disables. */
export async function disabledIn(db: Executor, repositoryId: number): Promise<Set<number>> {
  const rows = await db.selectFrom('issue_type_disabled_repositories').select('issue_type_id').where('repository_id', '=', repositoryId).execute();
  return new Set(rows.map((r) => r.issue_type_id));
}

export async function setDisabled(db: Executor, issueTypeId: number, repositoryId: number, disabled: boolean, now: string): Promise<void> {
  if (disabled) {
    await db
      .insertInto('issue_type_disabled_repositories')
      .values({ issue_type_id: issueTypeId, repository_id: repositoryId, created_at: now })
      .onConflict((oc) => oc.columns(['issue_type_id', 'repository_id']).doNothing())
      .execute();
  } else {
    await db.deleteFrom('issue_type_disabled_repositories').where('issue_type_id', '=', issueTypeId).where('repository_id', '=', repositoryId).execute();
  }
}
