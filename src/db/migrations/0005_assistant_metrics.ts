import type { Kysely } from 'kysely';

// The tables of this area (see the area's tables.ts).
export async function up(_db: Kysely<any>): Promise<void> {}
