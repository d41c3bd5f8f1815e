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
