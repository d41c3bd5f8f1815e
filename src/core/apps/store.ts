// Apps: lookups by slug.
import type { Executor } from '../../db/index.ts';
import type { AppRow } from '../callers/principal.ts';

export async function findApp(db: Executor, slug: string): Promise<AppRow | undefined> {
  return db.selectFrom('apps').selectAll().where('slug', '=', slug).executeTakeFirst();
}

/** Every app with its owner's login (null when it has none), oldest first, one page at a time, with the total. */
export async function listApps(db: Executor, page: { limit: number; offset: number }): Promise<{ rows: Array<AppRow & { owner_login: string | null }>; total: number }> {
  const rows = await db
    .selectFrom('apps')
    .leftJoin('users', 'users.id', 'apps.owner_id')
    .selectAll('apps')
    .select('users.login as owner_login')
    .orderBy('apps.id')
    .limit(page.limit)
    .offset(page.offset)
    .execute();
  const count = await db.selectFrom('apps').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
  return { rows, total: Number(count.n) };
}
