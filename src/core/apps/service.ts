// What an app framework asks about the app: the app itself, its installations (all of them, one, or
// the one covering a repository, an organization or a user), the repositories an installation token
// reaches, and revoking that token. Another app's installation is a 404, as is an account or
// repository the app is not installed on.
import { createHash } from 'node:crypto';
import type { Executor } from '../../db/index.ts';
import { notFound } from '../../platform/errors.ts';
import type { Urls } from '../../platform/urls.ts';
import { Service } from '../../platform/service.ts';
import { findAccount } from '../accounts/store.ts';
import type { AppRow } from './store.ts';
import { loadRepositoryFacts } from '../repositories/facts.ts';
import { fullRepository, type FullRepository } from '../repositories/representations.ts';
import { findRepository } from '../repositories/store.ts';
import { appRepresentation, installationRepresentation, type App, type Installation } from './representations.ts';
import * as store from './store.ts';
import type { InstallationPrincipal } from '../access/index.ts';

/** An app as anyone sees it, its owner read (a check run's and check suite's `app`, GET /apps/{app_slug}). */
export async function shownApp(db: Executor, urls: Urls, app: AppRow): Promise<App> {
  return appRepresentation(urls, app, await store.findAppOwner(db, app));
}

export class AppService extends Service {
  /** The calling app, with how many installations it has. */
  async self(app: AppRow): Promise<App> {
    const [owner, count] = await Promise.all([store.findAppOwner(this.db, app), store.countInstallations(this.db, app.id)]);
    return appRepresentation(this.ctx.urls, app, owner, count);
  }

  /** Any app by its slug, as anyone sees it. */
  async bySlug(slug: string): Promise<App> {
    const app = await store.findApp(this.db, slug);
    if (!app) throw notFound();
    return shownApp(this.db, this.ctx.urls, app);
  }

  async listInstallations(app: AppRow, page: { offset: number; limit: number; since?: string }): Promise<{ total: number; installations: Installation[] }> {
    const { total, installations } = await store.listInstallations(this.db, app.id, page);
    return { total, installations: installations.map((found) => this.installation(app, found)) };
  }

  async getInstallation(app: AppRow, installationId: number): Promise<Installation> {
    return this.installation(app, await store.findInstallation(this.db, app.id, installationId));
  }

  async repositoryInstallation(app: AppRow, owner: string, name: string): Promise<Installation> {
    const repository = await findRepository(this.db, owner, name);
    return this.installation(app, repository && (await store.findInstallationCovering(this.db, app.id, repository)));
  }

  /** The installation on an organization (`Organization` only) or on any account by login. */
  async accountInstallation(app: AppRow, login: string, type: 'Organization' | 'any'): Promise<Installation> {
    const account = await findAccount(this.db, login);
    if (!account || (type === 'Organization' && account.type !== 'Organization')) throw notFound();
    return this.installation(app, await store.findInstallationOnAccount(this.db, app.id, account.id));
  }

  /**
   * The entity tag of a page of `installationRepositories`, from one statement that reads no
   * repository: the installation token's scope, the total, and each repository of the page with its
   * representation version (moved by every write a full Repository is made of: renamed, made
   * private, description, owner renamed, counts; a repository deleted or no longer reached leaves
   * the page). Null when it cannot be decided so (no installation, a repository without a version):
   * the answer is then rendered and tagged by its hash.
   */
  async installationRepositoriesTag(principal: InstallationPrincipal, page: { offset: number; limit: number }): Promise<string | null> {
    const repositoryIds = principal.repositorySelection === 'selected' ? principal.repositoryIds : null;
    const read = await store.installationRepositoryVersions(this.db, principal.appId, {
      installationId: principal.installationId,
      accountId: principal.accountId,
      repositoryIds,
    }, page);
    if (!read || read.unversioned > 0) return null;
    // The world too (ChangeFeed.world): the test double's resets and restores put the versions back.
    const made = JSON.stringify([principal.installationId, principal.repositorySelection, repositoryIds, page, read.total, read.page, this.ctx.db.feed.world]);
    return `W/"${createHash('sha1').update(`installation-repositories\n${made}`).digest('hex')}"`;
  }

  /**
   * The repositories the installation token reaches (its installation's, narrowed to the token's own
   * list when it has one), in full, with the token's repository selection.
   */
  async installationRepositories(principal: InstallationPrincipal, page: { offset: number; limit: number }) {
    const found = await store.findInstallation(this.db, principal.appId, principal.installationId);
    if (!found) throw notFound();
    const { total, repositories } = await store.installationRepositoryPage(this.db, {
      installationId: principal.installationId,
      accountId: principal.accountId,
      repositoryIds: principal.repositorySelection === 'selected' ? principal.repositoryIds : null,
    }, page);
    const facts = await loadRepositoryFacts(this.db, repositories.map((repository) => repository.id));
    const body: { total_count: number; repository_selection: 'all' | 'selected'; repositories: FullRepository[] } = {
      total_count: total,
      repository_selection: principal.repositorySelection,
      repositories: repositories.map((repository) => fullRepository(this.ctx.urls, repository, found.account, facts.get(repository.id)!)),
    };
    return body;
  }

  /** Revokes the calling installation token. */
  async revoke(principal: InstallationPrincipal): Promise<void> {
    await store.deleteToken(this.db, principal.tokenId);
  }

  private installation(app: AppRow, found: store.InstallationWithAccount | undefined): Installation {
    if (!found) throw notFound();
    return installationRepresentation(this.ctx.urls, app, found.installation, found.account);
  }
}
