// What a second app's receiver got since the test last looked: every delivery valid against the
// platform's webhook schema, their kinds (`event/action`, or `event` for one without actions) sorted
// — deliveries are concurrent, so their order is not the writes' — and the body of each kind.
import assert from 'node:assert/strict';
import type { TestServer } from './server.ts';
import type { Receiver, Received } from './receiver.ts';
import { webhookSchemas } from './webhook-schemas.ts';

const schemas = webhookSchemas();

export interface Delivered {
  kinds: string[];
  /** The body of the first delivery of `kind`. */
  body: (kind: string) => Received['json'];
}

export const deliveryKind = (d: Received) => `${d.headers['x-vendor-event']}${d.json.action ? `/${d.json.action}` : ''}`;

/** Looks at `path` of `receiver`: `skip()` passes over what is there (the setup's), `delivered()` drains the jobs and answers what came since. */
export function watchDeliveries(server: () => TestServer, receiver: () => Receiver, path: string) {
  let seen = 0;
  return {
    skip(): void {
      seen = receiver().on(path).length;
    },
    async delivered(): Promise<Delivered> {
      await server().drain();
      const fresh = receiver().on(path).slice(seen);
      seen += fresh.length;
      for (const d of fresh) assert.deepEqual(schemas.errors(String(d.headers['x-vendor-event']), d.json.action, d.json), [], `${deliveryKind(d)} validates`);
      return { kinds: fresh.map(deliveryKind).sort(), body: (wanted) => fresh.find((d) => deliveryKind(d) === wanted)?.json };
    },
  };
}
