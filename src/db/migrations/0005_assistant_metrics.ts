import type { Kysely } from 'kysely';

// Assistant metrics: each organization's metrics policy and its day records, for the organization and
// for its teams (see src/db/tables/assistant-metrics.ts).
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('assistant_metrics_policies')
    .addColumn('org_id', 'integer', (c) => c.primaryKey().references('users.id').onDelete('cascade'))
    .addColumn('metrics_policy', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('assistant_metrics_days')
    .addColumn('org_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('date', 'text', (c) => c.notNull())
    .addColumn('licensed_members', 'integer', (c) => c.notNull())
    .addColumn('metrics', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('assistant_metrics_days_pk', ['org_id', 'date'])
    .execute();

  await db.schema
    .createTable('assistant_metrics_team_days')
    .addColumn('team_id', 'integer', (c) => c.notNull().references('teams.id').onDelete('cascade'))
    .addColumn('date', 'text', (c) => c.notNull())
    .addColumn('licensed_members', 'integer', (c) => c.notNull())
    .addColumn('metrics', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('assistant_metrics_team_days_pk', ['team_id', 'date'])
    .execute();
}
