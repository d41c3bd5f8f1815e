import type { Area } from '../../platform/context.ts';

export const codeSecurity: Area = {
  name: 'code-security',
};
