// What every area's routes and services are given: configuration, database, clock, queue, URLs.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyBaseLogger, FastifyInstance, RawServerDefault } from 'fastify';
import type { Config } from '../config.ts';
import type { ActivityRow } from '../activity/outbox.ts';
import type { Db, Executor } from '../db/index.ts';
import type { Periodic } from '../jobs/periodic.ts';
import type { Queue } from '../jobs/queue.ts';
import type { Clock } from './clock.ts';
import type { RateLimiter } from './rate-limit.ts';
import type { AppRow } from '../core/callers/principal.ts';
import type { RepositoryRow } from '../core/repositories/representations.ts';
import type { Urls } from './urls.ts';
import type { Secrets } from './secrets.ts';

export interface Context {
  config: Config;
  db: Db;
  clock: Clock;
  queue: Queue;
  urls: Urls;
  secrets: Secrets;
  rateLimiter: RateLimiter;
  log: FastifyBaseLogger;
  periodic: Periodic;
}

export type Api = FastifyInstance<RawServerDefault, IncomingMessage, ServerResponse, FastifyBaseLogger, TypeBoxTypeProvider>;

/**
 * One area of the API (or the activity core): its public routes, its operator routes under /_admin,
 * its background workers, the seed-file keys it loads, and what it does when a repository is created.
 */
export interface Area {
  name: string;
  routes?(app: Api, ctx: Context): void;
  admin?(app: Api, ctx: Context): void;
  workers?(ctx: Context): void;
  /** Seed-file keys this area loads, in order, after the core keys (users, orgs, repos, apps...). */
  seed?: Record<string, (ctx: Context, entries: unknown[]) => Promise<void>>;
  onRepositoryCreated?(ctx: Context, repository: RepositoryRow): Promise<void>;
  /**
   * Consumes one row of the activity outbox inside `trx` (which also records the consumption), so
   * its effects and the marker commit together. See src/activity/outbox.ts.
   */
  onActivity?(ctx: Context, trx: Executor, activity: ActivityRow): Promise<void>;
  /** An app was created on the operator surface; `input` is the whole create body (e.g. its `webhook`). */
  onAppCreated?(ctx: Context, app: AppRow, input: Record<string, unknown>): Promise<void>;
  /** Repository access changed (memberships, collaborators, team repositories, visibility), inside `trx`. */
  onAccessChanged?(ctx: Context, trx: Executor, change: AccessChange): Promise<void>;
}

/** Whose repository access changed: some users' (on some repositories), or anyone's on some repositories. */
export type AccessChange = { userIds: readonly number[] } | { repositoryIds: readonly number[] };
