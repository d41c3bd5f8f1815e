// The queue for the configured database: pg-boss on PostgreSQL, the polled `jobs` table on SQLite.
import type { Config } from '../config.ts';
import type { Db } from '../db/index.ts';
import { PgBossQueue } from './pgboss-queue.ts';
import type { Logger, Queue } from './queue.ts';
import { TableQueue } from './sqlite-queue.ts';

export { drainAll } from './queue.ts';
export type { Backlog, DrainResult, JobHandler, Logger, Queue, SendOptions, WorkOptions } from './queue.ts';

export function createQueue(db: Db, config: Config, logger: Logger): Queue {
  return db.dialect === 'postgres' ? new PgBossQueue(db, config, logger) : new TableQueue(db, config, logger);
}
