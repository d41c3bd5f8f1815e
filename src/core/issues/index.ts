import type { LifecycleArea } from '../area.ts';
import { activityAdminRoutes } from './admin-routes.ts';
import { issueRoutes } from './routes.ts';
import { issueWriteRoutes } from './write-routes.ts';
import { pullRoutes } from './pull-routes.ts';
import { labelRoutes } from './label-routes.ts';
import { reactionRoutes } from './reaction-routes.ts';
import { seedComments, seedIssues } from './seed.ts';

/** Issues, pull requests and comments: their public reads, their operator routes (each write is platform activity) and seed keys. */
export const issues: LifecycleArea = {
  name: 'issues',
  routes: (app, ctx) => {
    issueRoutes(app, ctx);
    issueWriteRoutes(app, ctx);
    labelRoutes(app, ctx);
    reactionRoutes(app, ctx);
    pullRoutes(app, ctx);
  },
  admin: activityAdminRoutes,
  seed: { issues: seedIssues, comments: seedComments },
  lifecycle: {
    'repository.transferred': { handled: 'reads: issues are the repository\'s rows (by id), read through its current owner and access' },
    'repository.renamed': { handled: 'reads: issues are the repository\'s rows (by id); their URLs are rendered from its current name' },
    'repository.deleted': { handled: 'cascade: its issues, comments, events, labels, reactions and reviews go with the repository' },
    'repository.archived': { handled: 'writes: an archived repository\'s issues refuse writes (403, assertRepositoryWritable)' },
    'user.suspended': { handled: 'reads: a suspended user\'s tokens are refused where every token is read (core/access/principal.ts)' },
    'user.deleted': { handled: 'in the write: what the user wrote on others\' repositories is reassigned to ghost (core/repositories/owner-writes.ts)' },
    'installation.suspend': { handled: 'reads: a suspended installation\'s tokens are refused where every token is read' },
    'installation.deleted': { handled: 'cascade: its tokens go with the installation' },
  },
};
