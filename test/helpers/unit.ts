// What the unit tables beside the rules share: a clock that stands still, and a look at the row locks a
// query asks for.
import type { KyselyPlugin, RootOperationNode } from 'kysely';
import { Clock } from '../../src/platform/clock.ts';

/** A clock that shows the time the test sets (`ms`), 2026-06-01T12:00:00Z to begin with. */
export class StillClock extends Clock {
  ms = Date.UTC(2026, 5, 1, 12, 0, 0);
  override nowMs(): number {
    return this.ms;
  }
  override now(): Date {
    return new Date(this.ms);
  }
}

/**
 * What a query asked to lock (`FOR UPDATE`, `FOR NO KEY UPDATE`), recorded and taken off so that SQLite
 * runs it: the lock is PostgreSQL's form of the rule (SQLite's writer lock serializes the writes already).
 */
export class LockSpy implements KyselyPlugin {
  locks: string[] = [];
  transformQuery({ node }: { node: RootOperationNode }): RootOperationNode {
    if (node.kind !== 'SelectQueryNode' || !node.endModifiers?.length) return node;
    this.locks.push(...node.endModifiers.map((modifier) => modifier.modifier ?? 'raw'));
    return { ...node, endModifiers: undefined };
  }
  async transformResult<T>({ result }: { result: T }): Promise<T> {
    return result;
  }
}
