import type { Generated } from 'kysely';

/** The durable job table the SQLite queue polls (PostgreSQL uses pg-boss's own tables). */
export interface JobsTable {
  id: Generated<number>;
  queue: string;
  data: string;
  /** Deduplicates sends: a second job with the same queue and key is not created. */
  singleton_key: string | null;
  run_after: string;
  /** Set while a worker holds the job; a job whose lease ran out (its worker died) runs again. */
  locked_until: string | null;
  attempts: number;
  retry_limit: number;
  retry_delay_seconds: number;
  /** 1: the retry delay doubles after each failure. */
  retry_backoff: number;
  last_error: string | null;
  created_at: string;
  /** SendOptions.group: a queue worked with a group limit runs at most that many jobs of a group at once. */
  group_key: string | null;
}

export interface JobTables {
  jobs: JobsTable;
}
