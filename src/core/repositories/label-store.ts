// The SQL of a repository's labels (the issues home attaches them to issues: src/core/issues/store.ts).
import type { Insertable, Selectable } from 'kysely';
import type { Executor } from '../../db/index.ts';
import { DEFAULT_LABELS, type LabelsTable } from '../../db/tables/repositories.ts';

export type LabelRow = Selectable<LabelsTable>;

/** The platform's default labels, given to a new repository in the transaction that makes it. */
export async function insertDefaultLabels(trx: Executor, repositoryId: number, now: string): Promise<void> {
  await trx.insertInto('labels').values(DEFAULT_LABELS.map((label) => ({
    repository_id: repositoryId, name: label.name, name_lower: label.name.toLowerCase(), color: label.color, description: label.description, is_default: 1, created_at: now, updated_at: now,
  }))).execute();
}

/** A page of the repository's labels, by name (any case: the platform's order is by id, which creation order follows). */
export async function labelPage(db: Executor, repositoryId: number, page: { offset: number; limit: number }): Promise<{ total: number; labels: LabelRow[] }> {
  const base = db.selectFrom('labels').where('repository_id', '=', repositoryId);
  const [count, labels] = await Promise.all([
    base.select((eb) => eb.fn.countAll<number>().as('count')).executeTakeFirstOrThrow(),
    base.selectAll().orderBy('id').offset(page.offset).limit(page.limit).execute(),
  ]);
  return { total: Number(count.count), labels };
}

/** The label of that name (any case) in the repository. */
export async function findLabel(db: Executor, repositoryId: number, name: string): Promise<LabelRow | undefined> {
  return db.selectFrom('labels').selectAll().where('repository_id', '=', repositoryId).where('name_lower', '=', name.toLowerCase()).executeTakeFirst();
}

/** The labels of these names (any case) that the repository has. */
export async function labelsNamed(db: Executor, repositoryId: number, names: readonly string[]): Promise<LabelRow[]> {
  if (!names.length) return [];
  return db.selectFrom('labels').selectAll().where('repository_id', '=', repositoryId).where('name_lower', 'in', [...new Set(names.map((n) => n.toLowerCase()))]).execute();
}

export async function insertLabel(trx: Executor, values: Insertable<LabelsTable>): Promise<LabelRow> {
  return trx.insertInto('labels').values(values).returningAll().executeTakeFirstOrThrow();
}

/**
 * A label made unless the repository has one of its name by now (a concurrent write made it): the
 * new row, or undefined when it was there.
 */
export async function insertLabelIfAbsent(trx: Executor, values: Insertable<LabelsTable>): Promise<LabelRow | undefined> {
  return trx.insertInto('labels').values(values).onConflict((c) => c.columns(['repository_id', 'name_lower']).doNothing()).returningAll().executeTakeFirst();
}

export async function updateLabel(trx: Executor, id: number, values: Partial<Pick<LabelRow, 'name' | 'name_lower' | 'color' | 'description' | 'updated_at'>>): Promise<LabelRow> {
  return trx.updateTable('labels').set(values).where('id', '=', id).returningAll().executeTakeFirstOrThrow();
}

export async function deleteLabel(trx: Executor, id: number): Promise<void> {
  await trx.deleteFrom('labels').where('id', '=', id).execute();
}
