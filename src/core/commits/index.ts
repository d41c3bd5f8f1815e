import type { LifecycleArea } from '../area.ts';
import { commitRoutes } from './routes.ts';

/** Commits of a repository's git data, their statuses and check runs: the public reads and writes (each write is platform activity). */
export const commits: LifecycleArea = {
  name: 'commits',
  routes: commitRoutes,
  lifecycle: {
    'repository.transferred': { handled: 'reads: statuses and check runs are the repository\'s rows (by id), read through its current owner and access' },
    'repository.renamed': { handled: 'reads: statuses and check runs are the repository\'s rows (by id); their URLs are rendered from its current name' },
    'repository.deleted': { handled: 'cascade: its statuses, check suites and check runs go with the repository' },
    'repository.archived': { handled: 'writes: an archived repository refuses statuses and check runs (403, stillWritable)' },
    'user.suspended': { handled: 'reads: a suspended user\'s tokens are refused where every token is read (core/access/principal.ts)' },
    'user.deleted': { handled: 'in the write: the statuses the user made stay, made by ghost (core/accounts/store.ts reassignAuthorship)' },
    'installation.suspend': { handled: 'reads: a suspended installation\'s tokens are refused where every token is read' },
    'installation.deleted': { handled: 'cascade: its tokens go with the installation; its app\'s check runs stay, as on the platform' },
  },
};
