import type { Area } from '../platform/context.ts';

/** Platform activity in (issues, comments, state changes, raw events) and the outbox that fans it out. */
export const activity: Area = {
  name: 'activity',
};
