// What every area's routes and services are given: configuration, database, clock, queue, URLs,
// and the server's own services and caches.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyBaseLogger, FastifyInstance, RawServerDefault } from 'fastify';
import type { Config } from '../config.ts';
import type { Db } from '../db/index.ts';
import type { Periodic } from '../jobs/periodic.ts';
import type { Queue } from '../jobs/queue.ts';
import type { Clock } from './clock.ts';
import type { RateLimiter } from './rate-limit.ts';
import type { Urls } from './urls.ts';
import type { Secrets } from './secrets.ts';
import type { PerServerState } from './per-server.ts';
import type { VendorNames } from './vendor.ts';

export interface Context {
  config: Config;
  db: Db;
  clock: Clock;
  queue: Queue;
  urls: Urls;
  /** The header names (and the rest) that carry the vendor word (CODEHOST_VENDOR_WORD). */
  vendor: VendorNames;
  secrets: Secrets;
  rateLimiter: RateLimiter;
  log: FastifyBaseLogger;
  periodic: Periodic;
  /** This server's services and caches, each made on first use (see per-server.ts). */
  perServer: PerServerState;
}

export type Api = FastifyInstance<RawServerDefault, IncomingMessage, ServerResponse, FastifyBaseLogger, TypeBoxTypeProvider>;
