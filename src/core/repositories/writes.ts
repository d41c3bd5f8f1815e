// The writes of repositories: create, change (visibility, description, archived, rename, transfer)
// and delete one (spec/admin-api.md, "Lifecycle"), who watches it, and its access (collaborators and
// team grants). Each is one transaction with its activities; access changes tell the areas inside it
// (`access.changed`). Unknown references are 404, duplicates 422 `already_exists`.
import { execFile } from 'node:child_process';
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { Executor } from '../../db/index.ts';
import { heldRows } from '../../db/held.ts';
import type { RepositoryPermission } from '../../db/tables/repositories.ts';
import { ApiError, insertUnique, invalidField, notFound, validationFailed } from '../../platform/errors.ts';
import { organizationSimple, simpleUser } from '../accounts/representations.ts';
import { requireAccount, requireTeam } from '../accounts/lookup.ts';
import { teamMemberIds, type UserRow } from '../accounts/store.ts';
import { AreaWrites } from '../area.ts';
import { recordMemberActivity, recordRepositoryActivity } from './activities.ts';
import { repositoriesWithFacts } from './facts.ts';
import { removeGitData } from './git-sweep.ts';
import { requireRepository } from './lookup.ts';
import { insertDefaultLabels } from './label-store.ts';
import { isBranchName, isRepositoryName } from './names.ts';
import { fullRepository, type RepositoryRow } from './representations.ts';
import {
  collaboratorPermission, deleteRepository, detachFromOwner, dropFormerName, findRepository, findRepositoryById, insertRepository, installationsCovering, lockRepositoryToDelete, moveRepository, removeCollaborator,
  recordGitDataRemovals, removeTeamRepository, setCollaborator, setGitPath, setSubscription, setTeamRepository, teamHasRepository, updateRepository,
} from './store.ts';
import { permissionNames } from '../access/index.ts';

const run = promisify(execFile);

export class RepositoryWrites extends AreaWrites {
  async createRepository(input: {
    owner: string;
    name: string;
    visibility?: 'public' | 'private' | 'internal';
    description?: string;
    language?: string;
    topics?: string[];
    default_branch?: string;
    init_git?: boolean;
  }): Promise<RepositoryRow & { owner: UserRow }> {
    const owner = await requireAccount(this.db, input.owner);
    if (!isRepositoryName(input.name)) throw invalidField('Repository', 'name');
    if (input.visibility === 'internal' && owner.type !== 'Organization') {
      throw invalidField('Repository', 'visibility', 'internal repositories belong to organizations');
    }
    const branch = input.default_branch ?? 'main';
    if (!isBranchName(branch)) throw invalidField('Repository', 'default_branch');
    const now = this.now();
    // The row, its git data and its activity in one transaction: a failure (or a crash) leaves
    // nothing half-made, and what consumes `repository.created` (code security's default
    // configuration) is sure to see it.
    const written: { id?: number; path?: string } = {};
    const repository = await this.transaction(async (trx) => {
      // The owner, held until the creation commits (src/db/held.ts): an owner deleted meanwhile is a
      // 404; a deletion that comes after waits, then finds this repository and its git data to remove
      // (it locks the owner before it lists what the owner has), so none is left behind.
      if (!(await heldRows(trx, 'users', [owner.id], 'share')).size) throw notFound(`${owner.type === 'Organization' ? 'Organization' : 'User'} not found: ${owner.login}`);
      const row = await insertUnique('Repository', 'name', () =>
        insertRepository(trx, {
          owner_id: owner.id,
          name: input.name,
          name_lower: input.name.toLowerCase(),
          description: input.description ?? null,
          visibility: input.visibility ?? 'public',
          language: input.language ?? null,
          topics: JSON.stringify(input.topics ?? []),
          default_branch: branch,
          git_path: null,
          locked_by_migration_id: null,
          security_and_analysis: '{}',
          created_at: now,
          updated_at: now,
          pushed_at: input.init_git ? now : null,
        }),
      );
      if (input.init_git) {
        const gitPath = join('git', `${row.id}.git`);
        try {
          // What is there is a creation's that never committed (on SQLite its id is given again).
          await rm(join(this.ctx.config.dataDir, gitPath), { recursive: true, force: true });
          Object.assign(written, { id: row.id, path: gitPath });
          await initBareRepository(join(this.ctx.config.dataDir, gitPath), input.name, branch, this.ctx.clock.now());
        } catch (error) {
          await rm(join(this.ctx.config.dataDir, gitPath), { recursive: true, force: true });
          this.ctx.log.error({ err: error, repository: row.id }, 'could not create the git data');
          throw new ApiError(500, 'Could not create the git data of the repository');
        }
        await setGitPath(trx, row.id, gitPath);
      }
      // The name is this repository's now: no longer a former name redirecting elsewhere.
      await dropFormerName(trx, owner.login, input.name);
      await insertDefaultLabels(trx, row.id, now);
      await recordRepositoryActivity(this.ctx, trx, { name: 'repository.created', repository_id: row.id, payload: { repository: await this.asLeft(trx, row.id) } });
      return row;
    }).catch(async (error: unknown) => {
      // Rolled back: its git data goes too (the full listing is for a creation killed here). A commit
      // whose answer was lost may have committed: then the row names it, and it stays.
      if (written.id !== undefined && written.path && !(await findRepositoryById(this.db, written.id))) {
        await rm(join(this.ctx.config.dataDir, written.path), { recursive: true, force: true });
      }
      throw error;
    });
    const current = await findRepositoryById(this.db, repository.id);
    // Deleted (with its owner, say) as soon as it was made: gone, as for any request after.
    if (!current) throw notFound('Repository not found');
    return { ...current, owner };
  }

  /** Gives a team access to a repository of its organization (or changes the permission). */
  async setTeamRepository(orgLogin: string, slug: string, owner: string, name: string, permission: RepositoryPermission = 'push') {
    const { org, team } = await requireTeam(this.db, orgLogin, slug);
    const repository = await requireRepository(this.db, owner, name);
    if (repository.owner_id !== org.id) throw invalidField('Team', 'repository', `${owner}/${name} does not belong to ${org.login}`);
    await this.transaction(async (trx) => {
      const added = !(await teamHasRepository(trx, team.id, repository.id));
      await setTeamRepository(trx, team.id, repository.id, permission);
      await this.record(trx, { name: 'access.changed', payload: { userIds: await teamMemberIds(trx, team.id) } });
      if (added) {
        await recordMemberActivity(this.ctx, trx, { name: 'team_add', repository_id: repository.id, payload: { team_id: team.id } });
        await recordMemberActivity(this.ctx, trx, { name: 'team.added_to_repository', repository_id: repository.id, payload: { team_id: team.id } });
      }
    });
    return { repository, permission };
  }

  async removeTeamRepository(orgLogin: string, slug: string, owner: string, name: string): Promise<void> {
    const { team } = await requireTeam(this.db, orgLogin, slug);
    const repository = await requireRepository(this.db, owner, name);
    await this.transaction(async (trx) => {
      const had = await teamHasRepository(trx, team.id, repository.id);
      await removeTeamRepository(trx, team.id, repository.id);
      await this.record(trx, { name: 'access.changed', payload: { userIds: await teamMemberIds(trx, team.id) } });
      if (had) await recordMemberActivity(this.ctx, trx, { name: 'team.removed_from_repository', repository_id: repository.id, payload: { team_id: team.id } });
    });
  }

  /** Direct access to one repository; its owner cannot be a collaborator. */
  async setCollaborator(owner: string, name: string, login: string, permission: RepositoryPermission = 'push') {
    const repository = await requireRepository(this.db, owner, name);
    const user = await requireAccount(this.db, login, 'user');
    if (user.id === repository.owner_id) throw invalidField('Repository', 'collaborator', 'the owner of a repository cannot be its collaborator');
    await this.transaction(async (trx) => {
      const before = await collaboratorPermission(trx, repository.id, user.id);
      await setCollaborator(trx, repository.id, user.id, permission, this.now());
      await this.record(trx, { name: 'access.changed', payload: { userIds: [user.id] } });
      const to = permissionNames(permission);
      if (before === undefined) {
        await recordMemberActivity(this.ctx, trx, {
          name: 'member.added', repository_id: repository.id, payload: { member_id: user.id, changes: { permission: { to: to.permission }, role_name: { to: to.role_name } } },
        });
      } else if (before !== permission) {
        const from = permissionNames(before).permission;
        await recordMemberActivity(this.ctx, trx, {
          name: 'member.edited', repository_id: repository.id, payload: { member_id: user.id, changes: { old_permission: { from }, permission: { from, to: to.permission } } },
        });
      }
    });
    return { repository, user, permission };
  }

  async removeCollaborator(owner: string, name: string, login: string): Promise<void> {
    const repository = await requireRepository(this.db, owner, name);
    const user = await requireAccount(this.db, login, 'user');
    await this.transaction(async (trx) => {
      if (await removeCollaborator(trx, repository.id, user.id)) {
        await recordMemberActivity(this.ctx, trx, { name: 'member.removed', repository_id: repository.id, payload: { member_id: user.id } });
      }
      await this.record(trx, { name: 'access.changed', payload: { userIds: [user.id] } });
    });
  }

  /**
   * Changes a repository's visibility, description or archived flag, renames it (`name`) or transfers
   * it (`owner`, a user or organization login); what is not given stays. A rename or transfer keeps
   * the former name (the old /repos/{owner}/{repo} redirects to /repositories/{id}); a transfer takes
   * away the old organization's team grants and its installations' selections of the repository
   * (collaborators stay). All in one transaction with the activities.
   */
  async updateRepository(owner: string, name: string, input: {
    visibility?: 'public' | 'private' | 'internal'; description?: string | null; archived?: boolean; name?: string; owner?: string;
  }) {
    const repository = await requireRepository(this.db, owner, name);
    const destination = input.owner !== undefined ? await requireAccount(this.db, input.owner) : repository.owner;
    const newName = input.name ?? repository.name;
    if (!isRepositoryName(newName)) throw invalidField('Repository', 'name');
    const transferred = destination.id !== repository.owner_id;
    const renamed = newName !== repository.name;
    if ((input.visibility ?? repository.visibility) === 'internal' && destination.type !== 'Organization') {
      throw invalidField('Repository', 'visibility', 'internal repositories belong to organizations');
    }
    const taken = await findRepository(this.db, destination.login, newName);
    if ((transferred || renamed) && taken && taken.id !== repository.id) {
      throw validationFailed([{ resource: 'Repository', field: 'name', code: 'already_exists', message: `${destination.login}/${newName} already exists` }]);
    }
    const updated = await this.transaction(async (trx) => {
      if (transferred || renamed) {
        await insertUnique('Repository', 'name', () => moveRepository(trx, repository, { owner_id: destination.id, owner_login: destination.login, name: newName }, this.now()));
      }
      if (transferred) {
        await detachFromOwner(trx, repository.id, repository.owner_id);
        // Its new owner cannot be its collaborator.
        await removeCollaborator(trx, repository.id, destination.id);
      }
      // The areas, once the row has moved: one may refuse the move (the transaction undoes it), or
      // let go of what the former owner gave the repository (their `repository.moving` handlers).
      if (transferred || renamed) {
        await this.record(trx, {
          name: 'repository.moving', repository_id: repository.id,
          payload: { repositoryId: repository.id, fromOwnerId: repository.owner.id, toOwnerId: destination.id, name: newName, transferred, renamed },
        });
      }
      const row = await updateRepository(trx, repository.id, input, this.now());
      if (transferred || (input.visibility !== undefined && input.visibility !== repository.visibility)) await this.record(trx, { name: 'access.changed', payload: { repositoryIds: [repository.id] } });
      // Every event of the write shows the repository after all of it.
      const asLeft = { repository: await this.asLeft(trx, repository.id) };
      if (renamed) {
        await recordRepositoryActivity(this.ctx, trx, { name: 'repository.renamed', repository_id: repository.id, payload: { ...asLeft, changes: { repository: { name: { from: repository.name } } } } });
      }
      if (transferred) {
        const from = repository.owner.type === 'Organization'
          ? { organization: organizationSimple(this.ctx.urls, repository.owner) }
          : { user: simpleUser(this.ctx.urls, repository.owner) };
        await recordRepositoryActivity(this.ctx, trx, { name: 'repository.transferred', repository_id: repository.id, payload: { ...asLeft, changes: { owner: { from } } } });
      }
      if (input.archived !== undefined && input.archived !== Boolean(repository.archived)) {
        await recordRepositoryActivity(this.ctx, trx, { name: input.archived ? 'repository.archived' : 'repository.unarchived', repository_id: repository.id, payload: asLeft });
      }
      if (input.description !== undefined && input.description !== repository.description) {
        await recordRepositoryActivity(this.ctx, trx, { name: 'repository.edited', repository_id: repository.id, payload: { ...asLeft, changes: { description: { from: repository.description } } } });
      }
      // Public or not is what the platform announces; private and internal are both not public.
      if (input.visibility !== undefined && (input.visibility === 'public') !== (repository.visibility === 'public')) {
        await recordRepositoryActivity(this.ctx, trx, { name: input.visibility === 'public' ? 'repository.publicized' : 'repository.privatized', repository_id: repository.id, payload: asLeft });
      }
      return row;
    });
    return { ...updated, owner: destination };
  }

  /**
   * Deletes a repository and everything in it (its rows go by the foreign keys' cascades: issues,
   * notification threads, subscriptions, collaborators, team grants, installation selections, code
   * security attachments) in one transaction with its `repository.deleted` activity, whose payload
   * is built while the row still exists; its git data goes once that has committed.
   */
  async deleteRepository(owner: string, name: string): Promise<void> {
    const repository = await requireRepository(this.db, owner, name);
    await this.transaction(async (trx) => {
      // Locked first, and found still there: of concurrent deletions one deletes, the others are 404.
      if (!(await lockRepositoryToDelete(trx, repository.id, this.ctx.db.dialect === 'postgres'))) throw notFound('Repository not found');
      const payload = { repository: await this.asLeft(trx, repository.id), installation_ids: await installationsCovering(trx, repository) };
      await recordRepositoryActivity(this.ctx, trx, { name: 'repository.deleted', repository_id: repository.id, account_id: repository.owner_id, payload });
      await this.record(trx, { name: 'access.changed', payload: { repositoryIds: [repository.id] } });
      await deleteRepository(trx, repository.id);
      if (repository.git_path) await recordGitDataRemovals(trx, [repository.git_path], this.now());
    });
    if (repository.git_path) await removeGitData(this.ctx, [repository.git_path]);
  }

  async setWatch(owner: string, name: string, input: { login: string; subscribed?: boolean; ignored?: boolean }) {
    const repository = await findRepository(this.db, owner, name);
    if (!repository) throw notFound('Repository not found');
    const user = await requireAccount(this.db, input.login, 'user');
    const ignored = input.ignored ?? false;
    const subscribed = ignored ? false : (input.subscribed ?? true);
    const now = this.now();
    const row = await setSubscription(this.db, repository.id, user.id, { subscribed, ignored }, now);
    return { repository, user, row };
  }

  /** A repository as `repository` events show it, read inside the write's transaction. */
  private async asLeft(trx: Executor, repositoryId: number): Promise<ReturnType<typeof fullRepository>> {
    const [found] = await repositoriesWithFacts(trx, [repositoryId]);
    if (!found) throw notFound('Repository not found');
    return fullRepository(this.ctx.urls, found.repository, found.owner, found.facts);
  }
}

/**
 * Bare git data with one commit holding a README, written with git's plumbing (no work tree); the
 * commit is dated by the clock (the test clock's time when it moved).
 */
async function initBareRepository(path: string, name: string, branch: string, at: Date): Promise<void> {
  await mkdir(path, { recursive: true });
  const date = `@${Math.floor(at.getTime() / 1000)} +0000`;
  const env = {
    ...process.env,
    GIT_AUTHOR_DATE: date,
    GIT_COMMITTER_DATE: date,
    GIT_AUTHOR_NAME: 'codehost',
    GIT_AUTHOR_EMAIL: 'codehost@noreply.codehost.invalid',
    GIT_COMMITTER_NAME: 'codehost',
    GIT_COMMITTER_EMAIL: 'codehost@noreply.codehost.invalid',
  };
  const git = async (args: string[], input?: string) => {
    const child = run('git', ['--git-dir', path, ...args], { env });
    if (input !== undefined) {
      child.child.stdin!.end(input);
    }
    return (await child).stdout.trim();
  };
  await git(['init', '--bare', '--quiet', `--initial-branch=${branch}`]);
  const blob = await git(['hash-object', '-w', '--stdin'], `# ${name}\n`);
  const tree = await git(['mktree'], `100644 blob ${blob}\tREADME.md\n`);
  const commit = await git(['commit-tree', tree, '-m', 'Initial commit']);
  await git(['update-ref', `refs/heads/${branch}`, commit]);
}
