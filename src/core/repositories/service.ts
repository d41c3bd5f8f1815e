// The public read of a repository, and the rule every read inside a repository shares: a public
// repository is read by any caller the route accepts; a private (or internal) one only by a caller
// who may read it through a credential that reaches it (else 404), with the `repo` scope (classic
// and OAuth tokens, else 404) or one of the route's permissions (fine-grained tokens, else 403).
import { Service } from '../../platform/service.ts';
import { requireReadableRepository, userRepositoryPermissions } from '../callers/access.ts';
import type { Permissions } from '../apps/permissions.ts';
import type { UserRow } from '../accounts/store.ts';
import type { Principal } from '../callers/principal.ts';
import { representRepository } from './facts.ts';
import type { FullRepository, RepositoryRow } from './representations.ts';
import { findRepository } from './store.ts';

export type ReadableRepository = RepositoryRow & { owner: UserRow };

/** Fine-grained permissions any one of which reads a repository's metadata. */
export const REPOSITORY_READ: readonly Permissions[] = [{ metadata: 'read' }, { contents: 'read' }, { issues: 'read' }, { pull_requests: 'read' }, { administration: 'read' }];

export class RepositoryService extends Service {
  /** The repository `owner/name` if the caller may read it, by the route's rule (requireReadableRepository). */
  async readable(principal: Principal, owner: string, name: string): Promise<ReadableRepository> {
    return requireReadableRepository(this.db, principal, await findRepository(this.db, owner, name));
  }

  /** GET /repos/{owner}/{repo}: the full repository, with what the calling user may do with it. */
  async get(principal: Principal, owner: string, name: string): Promise<FullRepository> {
    const repository = await this.readable(principal, owner, name);
    const permissions = principal.type === 'user' ? await userRepositoryPermissions(this.db, principal.user.id, repository) : undefined;
    return representRepository(this.db, this.ctx.urls, repository, repository.owner, permissions);
  }
}
