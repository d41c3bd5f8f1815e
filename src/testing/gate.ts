// The test double's gate (support.ts): every request and background job holds it
// shared while it runs; a reset or a snapshot restore holds it alone, so a request sees the state
// before the swap or after it, never a mix. Only installed outside production mode.
import type { Context } from '../platform/context.ts';
import { perServer } from '../platform/per-server.ts';

export class Gate {
  private active = 0;
  /** Set while an exclusive section waits for the shared holders to leave, or runs. */
  private closed: Promise<void> | null = null;
  private drained: (() => void) | null = null;
  /** Exclusive sections, one after the other. */
  private chain: Promise<unknown> = Promise.resolve();

  /** Waits for no exclusive section to be running or waiting, enters; the function returned leaves (once). */
  async enter(): Promise<() => void> {
    while (this.closed) await this.closed;
    return this.entered();
  }

  /** Enters at once when no exclusive section is running or waiting (every request but those during a reset); else null. */
  tryEnter(): (() => void) | null {
    return this.closed ? null : this.entered();
  }

  private entered(): () => void {
    this.active++;
    let left = false;
    return () => {
      if (left) return;
      left = true;
      this.active--;
      if (this.active === 0) this.drained?.();
    };
  }

  async shared<T>(run: () => Promise<T>): Promise<T> {
    const leave = await this.enter();
    try {
      return await run();
    } finally {
      leave();
    }
  }

  /** Runs alone: new holders wait from now on, and `run` starts once the present ones have left. */
  exclusive<T>(run: () => Promise<T>): Promise<T> {
    const turn = this.chain.then(async () => {
      let open!: () => void;
      this.closed = new Promise<void>((resolve) => (open = resolve));
      try {
        if (this.active > 0) await new Promise<void>((resolve) => (this.drained = resolve));
        this.drained = null;
        return await run();
      } finally {
        this.closed = null;
        open();
      }
    });
    this.chain = turn.catch(() => {});
    return turn;
  }
}

const gates = perServer(() => new Gate());

/** The gate of this server. */
export function gateOf(ctx: Context): Gate {
  return gates.of(ctx);
}
