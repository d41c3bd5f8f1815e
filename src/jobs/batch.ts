// Group commit for the writes that settle jobs: items added in the same turn of the event loop, or
// while a write is in flight, go out together, so a busy queue writes once per batch instead of once
// per job. The wait is one turn (setImmediate), not a timer: an idle queue adds no latency. Without it
// SQLite's synchronous driver finished every write before the next job ended, and batches were of one.

interface Entry<T> {
  item: T;
  resolve: () => void;
  reject: (err: unknown) => void;
}

export class WriteBatcher<T> {
  readonly #write: (items: T[]) => Promise<void>;
  readonly #maxItems: number;
  readonly #entries: Array<Entry<T>> = [];
  /** A drain is scheduled or running; cleared in the same synchronous step that finds nothing left. */
  #draining = false;

  /** `write` stores a batch of at most `maxItems` items; it rejects the whole batch or none of it. */
  constructor(write: (items: T[]) => Promise<void>, maxItems = 500) {
    this.#write = write;
    this.#maxItems = maxItems;
  }

  /** Resolves once the batch holding `item` is written; rejects with that batch's error. */
  add(item: T): Promise<void> {
    return new Promise((resolve, reject) => {
      this.#entries.push({ item, resolve, reject });
      if (!this.#draining) {
        this.#draining = true;
        setImmediate(() => void this.#drain());
      }
    });
  }

  async #drain(): Promise<void> {
    while (this.#entries.length > 0) {
      const batch = this.#entries.splice(0, this.#maxItems);
      try {
        await this.#write(batch.map((entry) => entry.item));
        for (const entry of batch) entry.resolve();
      } catch (err) {
        for (const entry of batch) entry.reject(err);
      }
    }
    this.#draining = false;
  }
}

/**
 * The read side of the same idea: keys asked for in the same turn of the event loop, or while a read
 * is in flight, are read together. The jobs a claim hands to their handlers all start in one turn, so
 * they read their rows in one statement rather than one each.
 */
export class BatchLoader<K, V> {
  readonly #read: (keys: K[]) => Promise<Map<K, V>>;
  readonly #maxKeys: number;
  readonly #waiting = new Map<K, Array<{ resolve: (value: V | undefined) => void; reject: (err: unknown) => void }>>();
  #reading = false;

  /** `read` answers the rows of at most `maxKeys` keys, by key; a key it leaves out answers undefined. */
  constructor(read: (keys: K[]) => Promise<Map<K, V>>, maxKeys = 500) {
    this.#read = read;
    this.#maxKeys = maxKeys;
  }

  load(key: K): Promise<V | undefined> {
    return new Promise((resolve, reject) => {
      const waiters = this.#waiting.get(key);
      if (waiters) waiters.push({ resolve, reject });
      else this.#waiting.set(key, [{ resolve, reject }]);
      if (!this.#reading) {
        this.#reading = true;
        setImmediate(() => void this.#drain());
      }
    });
  }

  async #drain(): Promise<void> {
    while (this.#waiting.size > 0) {
      const batch = [...this.#waiting].slice(0, this.#maxKeys);
      for (const [key] of batch) this.#waiting.delete(key);
      try {
        const rows = await this.#read(batch.map(([key]) => key));
        for (const [key, waiters] of batch) for (const waiter of waiters) waiter.resolve(rows.get(key));
      } catch (err) {
        for (const [, waiters] of batch) for (const waiter of waiters) waiter.reject(err);
      }
    }
    this.#reading = false;
  }
}
