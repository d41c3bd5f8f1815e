import type { Area } from '../../platform/context.ts';

export const issueTypes: Area = {
  name: 'issue-types',
};
