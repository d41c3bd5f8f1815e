// The queue for the configured database: pg-boss on PostgreSQL, the polled `jobs` table on SQLite.
import type { Config } from '../config.ts';
import type { Db } from '../db/index.ts';
import { PgBossQueue } from './pgboss-queue.ts';
import type { ConsumeOptions } from './middleware.ts';
import type { Logger, Queue } from './queue.ts';
import { TableQueue } from './sqlite-queue.ts';

export { drainAll } from './queue.ts';
export type { ConsumeMiddleware, ConsumeOptions } from './middleware.ts';
export type { Backlog, DrainResult, JobHandler, Logger, Queue, SendOptions, WorkOptions } from './queue.ts';

/** `options.consume` wraps every handler's run (the test double's gate outside production). */
export function createQueue(db: Db, config: Config, logger: Logger, options: ConsumeOptions = {}): Queue {
  return db.dialect === 'postgres' ? new PgBossQueue(db, config, logger, options) : new TableQueue(db, config, logger, options);
}
