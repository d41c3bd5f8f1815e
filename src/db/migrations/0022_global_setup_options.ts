import type { Kysely } from 'kysely';

// The built-in global configuration answers `code_scanning_default_setup_options: null`, as the
// platform's does (0004 wrote `{runner_type: not_set, runner_label: null}`, which is what a new
// organization configuration answers instead). Its other settings stay as they are.
export async function up(db: Kysely<any>): Promise<void> {
  const rows = await db.selectFrom('code_security_configurations').select(['id', 'settings']).where('target_type', '=', 'global').execute();
  for (const row of rows as { id: number; settings: string }[]) {
    const settings = { ...JSON.parse(row.settings), code_scanning_default_setup_options: null };
    await db.updateTable('code_security_configurations').set({ settings: JSON.stringify(settings) }).where('id', '=', row.id).execute();
  }
}
