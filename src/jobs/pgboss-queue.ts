// The queue on PostgreSQL: pg-boss 12 in the `pgboss` schema, with its own connection pool. Every
// process that sends starts pg-boss (sends need its schema and queue cache), and so also supervises:
// a job whose worker died stops heartbeating, and the next supervise pass fails it into a retry.
import { randomUUID } from 'node:crypto';
import { CompiledQuery, sql } from 'kysely';
import { PgBoss, type Db as BossDb, type JobWithMetadata } from 'pg-boss';
import type { Config } from '../config.ts';
import type { Db, Executor } from '../db/index.ts';
import type { JobHandler, Logger, Queue, SendOptions, WorkOptions } from './queue.ts';

const SCHEMA = 'pgboss';
/** pg-boss refuses shorter heartbeats, so a lease below this is stretched to it. */
const MIN_HEARTBEAT_SECONDS = 10;
/** pg-boss's longest allowed run. Heartbeats, not this, are what detect a dead worker. */
const MAX_RUN_SECONDS = 24 * 60 * 60;
/** pg-boss's shortest polling interval. */
const MIN_POLLING_SECONDS = 0.5;

interface Worker {
  handler: JobHandler<object>;
  concurrency: number;
}

export class PgBossQueue implements Queue {
  readonly #db: Db;
  readonly #log: Logger;
  readonly #boss: PgBoss;
  readonly #heartbeatSeconds: number;
  readonly #pollingSeconds: number;
  readonly #workers = new Map<string, Worker>();
  /** The first pg-boss worker of each queue this process works, to wake it after a local send. */
  readonly #workerIds = new Map<string, string>();
  readonly #queues = new Map<string, Promise<void>>();
  #booted: Promise<void> | null = null;
  #working = false;

  constructor(db: Db, config: Config, log: Logger) {
    if (!db.url) throw new Error('the pg-boss queue needs a PostgreSQL connection string');
    this.#db = db;
    this.#log = log;
    this.#heartbeatSeconds = Math.max(MIN_HEARTBEAT_SECONDS, config.jobs.leaseSeconds);
    this.#pollingSeconds = Math.max(MIN_POLLING_SECONDS, config.jobs.pollMilliseconds / 1000);
    // Expired heartbeats are only noticed by a supervise pass (gated by the monitor interval), so run
    // it several times per heartbeat: a dead worker's job is retried about 1.25 leases after it died.
    const superviseSeconds = Math.min(60, Math.max(1, Math.round(this.#heartbeatSeconds / 4)));
    this.#boss = new PgBoss({
      connectionString: db.url,
      // Its own pool, sized like the application's (plus one connection for LISTEN).
      max: config.databasePoolSize,
      schema: SCHEMA,
      // A send wakes the workers of every process at once (queues are created with `notify`).
      useListenNotify: true,
      superviseIntervalSeconds: superviseSeconds,
      monitorIntervalSeconds: superviseSeconds,
      schedule: false,
    });
    this.#boss.on('error', (err) => log.error({ err }, 'job queue error'));
    this.#boss.on('warning', (warning) => log.warn({ data: warning.data }, warning.message));
  }

  async send<T extends object>(name: string, data: T, options: SendOptions = {}): Promise<void> {
    await this.#queue(name);
    const id = randomUUID();
    await this.#boss.send(name, data, {
      id,
      // The queue's `exclusive` policy allows one queued or running job per key; a job sent without a
      // key gets a key of its own, so only callers that ask for deduplication get it.
      singletonKey: options.singletonKey ?? id,
      retryLimit: options.retryLimit ?? 2,
      retryDelay: options.retryDelaySeconds ?? 5,
      retryBackoff: options.retryBackoff ?? false,
      // Per job rather than per queue, so a changed lease applies to queues created before it.
      heartbeatSeconds: this.#heartbeatSeconds,
      expireInSeconds: MAX_RUN_SECONDS,
      ...(options.startAfterSeconds ? { startAfter: options.startAfterSeconds } : {}),
      ...(options.transaction ? { db: inTransaction(options.transaction) } : {}),
    });
    // NOTIFY already wakes workers; this covers a connection that cannot LISTEN (PgBouncer in
    // transaction mode). A transactional job is not visible until its commit, so it is left to them.
    const workerId = this.#workerIds.get(name);
    if (workerId && !options.transaction) this.#boss.notifyWorker(workerId);
  }

  work<T extends object>(name: string, handler: JobHandler<T>, options: WorkOptions = {}): void {
    this.#workers.set(name, { handler: handler as JobHandler<object>, concurrency: options.concurrency ?? 1 });
    if (this.#working) this.#register(name).catch((err: unknown) => this.#log.error({ err, queue: name }, 'could not start the job worker'));
  }

  async start(): Promise<void> {
    this.#working = true;
    await Promise.all([...this.#workers.keys()].map((name) => this.#register(name)));
  }

  async stop(timeoutMs = 30_000): Promise<void> {
    this.#working = false;
    // pg-boss fails the jobs still running at the deadline, so they are retried.
    if (this.#booted) await this.#boss.stop({ graceful: true, timeout: timeoutMs });
  }

  async pending(): Promise<number> {
    await this.#boot();
    const { rows } = await sql<{ count: number }>`
      select count(*)::int as count from ${sql.id(SCHEMA, 'job')}
      where state = 'active' or (state in ('created', 'retry') and start_after <= now())
    `.execute(this.#db.kysely);
    return rows[0]?.count ?? 0;
  }

  #boot(): Promise<void> {
    this.#booted ??= this.#boss.start().then(
      () => undefined,
      (err: unknown) => {
        this.#booted = null;
        throw err;
      },
    );
    return this.#booted;
  }

  /** Creates the queue once per process; create_queue leaves an existing queue as it is. */
  #queue(name: string): Promise<void> {
    let created = this.#queues.get(name);
    if (!created) {
      created = this.#boot().then(() =>
        this.#boss.createQueue(name, {
          policy: 'exclusive',
          notify: true,
          heartbeatSeconds: this.#heartbeatSeconds,
          expireInSeconds: MAX_RUN_SECONDS,
        }),
      );
      created.catch(() => this.#queues.delete(name));
      this.#queues.set(name, created);
    }
    return created;
  }

  async #register(name: string): Promise<void> {
    const worker = this.#workers.get(name);
    if (!worker || this.#workerIds.has(name)) return;
    await this.#queue(name);
    // One job per fetch and one pg-boss worker per concurrent job: a slow job never holds others back.
    const workerId = await this.#boss.work(
      name,
      {
        batchSize: 1,
        localConcurrency: worker.concurrency,
        pollingIntervalSeconds: this.#pollingSeconds,
        notifyPollingIntervalSeconds: this.#pollingSeconds,
        includeMetadata: true,
      },
      async ([job]: JobWithMetadata<object>[]) => this.#handle(worker.handler, job),
    );
    this.#workerIds.set(name, workerId);
  }

  async #handle(handler: JobHandler<object>, job: JobWithMetadata<object>): Promise<void> {
    const attempt = job.retryCount + 1;
    try {
      await handler(job.data, { id: job.id, attempt });
    } catch (err) {
      const context = { err, queue: job.name, jobId: job.id, attempt };
      if (job.retryCount >= job.retryLimit) this.#log.error(context, 'job failed; no retries left');
      else this.#log.warn(context, 'job failed; will retry');
      throw err;
    }
  }
}

/** Runs pg-boss's insert in the caller's Kysely transaction, so the job commits (or not) with it. */
function inTransaction(executor: Executor): BossDb {
  return {
    async executeSql(text, values) {
      const result = await executor.executeQuery(CompiledQuery.raw(text, values ?? []));
      return { rows: [...result.rows] };
    },
  };
}
