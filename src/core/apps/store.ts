// Apps: lookups by slug.
import type { Executor } from '../../db/index.ts';
import type { AppRow } from '../callers/principal.ts';

export async function findApp(db: Executor, slug: string): Promise<AppRow | undefined> {
  return db.selectFrom('apps').selectAll().where('slug', '=', slug).executeTakeFirst();
}
