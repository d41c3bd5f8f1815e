import type { LifecycleArea } from '../../core/area.ts';
import { appTokenRoutes } from './routes.ts';

export const appTokens: LifecycleArea = {
  name: 'app-tokens',
  routes: appTokenRoutes,
  lifecycle: {
    'repository.transferred': { handled: 'reads: a token reaches a repository through its installation\'s selection, which the transfer takes from the old owner\'s installations (core)' },
    'repository.renamed': { unaffected: 'tokens name repositories by id' },
    'repository.deleted': { handled: 'cascade: the installations\' selections of it go with the row' },
    'repository.archived': { unaffected: 'minting writes nothing of the repository; its writes are refused where they are made' },
    'user.suspended': { handled: 'reads: a suspended user\'s tokens are refused where every token is read (core/access/principal.ts)' },
    'user.deleted': { handled: 'cascade: the user\'s tokens and installations go with the account' },
    'installation.suspend': { handled: 'reads: minting for a suspended installation is refused (403), its tokens are refused when read' },
    'installation.deleted': { handled: 'cascade: its tokens go with the installation' },
  },
};
