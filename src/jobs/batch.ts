// Group commit for the writes that settle jobs: items added while a write is in flight go out
// together in the next one, so a busy queue writes once per batch instead of once per job, and an
// idle one writes at once (no timer, no added latency).

interface Entry<T> {
  item: T;
  resolve: () => void;
  reject: (err: unknown) => void;
}

export class WriteBatcher<T> {
  readonly #write: (items: T[]) => Promise<void>;
  readonly #maxItems: number;
  #entries: Array<Entry<T>> = [];
  #writing: Promise<void> | null = null;

  /** `write` stores a batch of at most `maxItems` items; it rejects the whole batch or none of it. */
  constructor(write: (items: T[]) => Promise<void>, maxItems = 500) {
    this.#write = write;
    this.#maxItems = maxItems;
  }

  /** Resolves once the batch holding `item` is written; rejects with that batch's error. */
  add(item: T): Promise<void> {
    return new Promise((resolve, reject) => {
      this.#entries.push({ item, resolve, reject });
      this.#writing ??= this.#drain().finally(() => (this.#writing = null));
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
  }
}
