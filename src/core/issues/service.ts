// The public reads of issues, pull requests and comments. Each is read inside its repository by
// the repository's rule (core/repositories/service.ts) with the permissions of the resource.
import { Service } from '../../platform/service.ts';
import { notFound } from '../../platform/errors.ts';
import { isRowId } from '../../platform/schemas.ts';
import type { Executor } from '../../db/index.ts';
import { RepositoryService, type ReadableRepository } from '../repositories/service.ts';
import type { PageParams } from '../../platform/pagination.ts';
import {
  commentRepresentation, eventRepresentation, issueRepresentation, type Issue, type IssueWithRepository, loadCommentFacts, loadCommentPageFacts, loadEventPageFacts,
  type IssueComment, type IssueEvent,
} from './representations.ts';
import { findComment, findIssue, issueFactsOf, issuePageFacts, type IssueFacts } from './store.ts';
import {
  commentPage, eventPage, findEvent, issueListPage, type CommentListQuery, type IssueListQuery,
} from './list-store.ts';
import { findAccount, usersByLogin, type UserRow } from '../accounts/store.ts';
import { repositoriesWithFacts } from '../repositories/facts.ts';
import { fullRepository } from '../repositories/representations.ts';
import { userRepositoryPermissions, type Permissions, type Principal, type UserPrincipal } from '../access/index.ts';

export const ISSUE_READ: readonly Permissions[] = [{ issues: 'read' }, { pull_requests: 'read' }];
/** What a client asks of a repository's issue list (GET /repos/{owner}/{repo}/issues), as given. */
export interface IssueListFilter {
  milestone?: string;
  state?: 'open' | 'closed' | 'all';
  assignee?: string;
  type?: string;
  creator?: string;
  mentioned?: string;
  labels?: string;
  sort?: 'created' | 'updated' | 'comments';
  direction?: 'asc' | 'desc';
  since?: string;
}

/** What a client asks of the user's and an organization's issue lists (GET /issues, /user/issues, /orgs/{org}/issues). */
export interface UserIssueFilter extends Pick<IssueListFilter, 'state' | 'labels' | 'sort' | 'direction' | 'since'> {
  filter?: 'assigned' | 'created' | 'mentioned' | 'subscribed' | 'repos' | 'all';
}

/** Comma-separated label names, as a list filters by them (any case). */
const labelNames = (labels: string | undefined) => (labels ?? '').split(',').map((name) => name.trim().toLowerCase()).filter(Boolean);

/** An issue list's order and `since`: newest created first unless asked. */
const listOrder = (query: Pick<IssueListFilter, 'sort' | 'direction' | 'since'>) => ({
  sort: query.sort ?? 'created',
  direction: query.direction ?? 'desc',
  since: query.since === undefined ? null : new Date(query.since).toISOString(),
});

export const PULL_READ: readonly Permissions[] = [{ pull_requests: 'read' }];

/** A path number that can name a row; anything else names nothing (404, as the platform answers). */
export function rowId(value: string): number {
  const id = /^\d{1,10}$/.test(value) ? Number(value) : NaN;
  if (!isRowId(id)) throw notFound();
  return id;
}

/**
 * The users the logins name (each once, by its lowercase login), and those of them with `role` on
 * the repository: user accounts only (an organization or a bot account never has one). Who may be
 * assigned (`push`) or asked for a review (`pull`).
 */
export async function usersWithRole(db: Executor, repository: ReadableRepository, logins: readonly string[], role: 'pull' | 'push'): Promise<{
  named: { login: string; user: UserRow | undefined }[];
  permitted: ReadonlySet<number>;
}> {
  const users = await usersByLogin(db, logins);
  const named = [...new Set(logins.map((l) => l.toLowerCase()))].map((login) => ({ login, user: users.find((u) => u.login_lower === login) }));
  const permitted = new Set<number>();
  for (const { user } of named) {
    if (user?.type === 'User' && (await userRepositoryPermissions(db, user.id, repository))[role]) permitted.add(user.id);
  }
  return { named, permitted };
}

export class IssueService extends Service {
  private readonly repositories = new RepositoryService(this.ctx);

  async issueWithRepository(principal: Principal, owner: string, repo: string, number: string) {
    const repository = await this.repositories.readable(principal, owner, repo);
    const issue = await findIssue(this.db, repository.id, rowId(number));
    if (!issue) throw notFound();
    return { issue, repository };
  }

  /** An issue, or a pull request in its Issue form (with `pull_request`). */
  async issue(principal: Principal, owner: string, repo: string, number: string) {
    const { issue, repository } = await this.issueWithRepository(principal, owner, repo, number);
    return issueRepresentation(this.ctx.urls, await issueFactsOf(this.db, issue, repository));
  }

  async comment(principal: Principal, owner: string, repo: string, commentId: string) {
    const repository = await this.repositories.readable(principal, owner, repo);
    const comment = await findComment(this.db, repository.id, rowId(commentId));
    if (!comment) throw notFound();
    return commentRepresentation(this.ctx.urls, await loadCommentFacts(this.db, comment.id));
  }

  /** An issue's (or pull request's) comments, oldest first; `since`: those updated at or after it. */
  async comments(principal: Principal, owner: string, repo: string, number: string, since: string | undefined, page: PageParams): Promise<{ total: number; items: IssueComment[] }> {
    const { issue, repository } = await this.issueWithRepository(principal, owner, repo, number);
    const after = since === undefined ? null : new Date(since).toISOString();
    const { total, comments } = await commentPage(this.db, { issueId: issue.id }, { sort: 'created', direction: 'asc', since: after }, { offset: page.offset, limit: page.perPage });
    const facts = await loadCommentPageFacts(this.db, comments, { issue, repository, owner: repository.owner });
    return { total, items: facts.map((f) => commentRepresentation(this.ctx.urls, f)) };
  }

  /**
   * A page of the repository's issues, pull requests included (as the platform lists them): people
   * by login (`assignee` and `type` also `*` or `none`); a login that names no user matches nothing.
   */
  async issues(principal: Principal, owner: string, repo: string, query: IssueListFilter, page: PageParams): Promise<{ total: number; items: Issue[] }> {
    const repository = await this.repositories.readable(principal, owner, repo);
    const logins = [query.assignee, query.creator, query.mentioned].filter((l): l is string => l !== undefined && l !== '*' && l !== 'none');
    const users = new Map((await usersByLogin(this.db, logins)).map((u) => [u.login_lower, u.id]));
    const idOf = (login: string | undefined) => (login === undefined ? undefined : users.get(login.toLowerCase()) ?? null);
    const assignee = query.assignee === '*' ? 'any' : query.assignee === 'none' ? 'none' : idOf(query.assignee);
    const creatorId = idOf(query.creator);
    const mentionedId = idOf(query.mentioned);
    // A milestone: codehost keeps none, so only `none` (or none asked) matches issues.
    if (assignee === null || creatorId === null || mentionedId === null || (query.milestone !== undefined && query.milestone !== 'none')) return { total: 0, items: [] };
    const filter: IssueListQuery = {
      state: query.state ?? 'open',
      ...(assignee !== undefined ? { assignee } : {}),
      ...(creatorId !== undefined ? { creatorId } : {}),
      ...(mentionedId !== undefined ? { mentionedId } : {}),
      labels: labelNames(query.labels),
      ...(query.type !== undefined ? { type: query.type === '*' ? 'any' : query.type === 'none' ? 'none' : query.type.toLowerCase() } : {}),
      ...listOrder(query),
    };
    const { total, issues } = await issueListPage(this.db, repository.id, filter, { offset: page.offset, limit: page.perPage });
    return { total, items: (await issuePageFacts(this.db, issues, repository)).map((facts) => issueRepresentation(this.ctx.urls, facts)) };
  }

  /**
   * A page of the issues (pull requests included) of the repositories the calling user reaches by
   * affiliation and the credential sees (of one organization: `org`), that involve the user as the
   * filter says (`assigned` by default; `repos` and `all`: every one); each with its repository.
   */
  async userIssues(principal: UserPrincipal, org: string | undefined, query: UserIssueFilter, page: PageParams): Promise<{ total: number; items: IssueWithRepository[] }> {
    const owner = org === undefined ? undefined : await findAccount(this.db, org);
    if (org !== undefined && owner?.type !== 'Organization') throw notFound();
    const repositoryIds = await this.repositories.affiliatedIds(principal, owner?.id);
    const filter = query.filter ?? 'assigned';
    const { total, issues } = await issueListPage(this.db, repositoryIds, {
      ...listOrder(query),
      state: query.state ?? 'open',
      labels: labelNames(query.labels),
      involving: { userId: principal.user.id, filter: filter === 'repos' ? 'all' : filter },
    }, { offset: page.offset, limit: page.perPage });
    const repositories = new Map((await repositoriesWithFacts(this.db, [...new Set(issues.map((i) => i.repository_id))])).map((r) => [r.repository.id, r]));
    const facts = new Map<number, IssueFacts>();
    for (const { repository } of repositories.values()) {
      for (const one of await issuePageFacts(this.db, issues.filter((i) => i.repository_id === repository.id), repository)) facts.set(one.issue.id, one);
    }
    return {
      total,
      items: issues.map((issue) => {
        const found = repositories.get(issue.repository_id)!;
        return { ...issueRepresentation(this.ctx.urls, facts.get(issue.id)!), repository: fullRepository(this.ctx.urls, found.repository, found.owner, found.facts) };
      }),
    };
  }

  /** A page of the repository's comments, of every issue and pull request. */
  async repositoryComments(principal: Principal, owner: string, repo: string, query: Partial<CommentListQuery> & { since?: string }, page: PageParams): Promise<{ total: number; items: IssueComment[] }> {
    const repository = await this.repositories.readable(principal, owner, repo);
    const { total, comments } = await commentPage(this.db, { repositoryId: repository.id }, {
      sort: query.sort ?? 'created',
      direction: query.direction ?? 'asc',
      since: query.since === undefined ? null : new Date(query.since).toISOString(),
    }, { offset: page.offset, limit: page.perPage });
    const facts = await loadCommentPageFacts(this.db, comments, { repository, owner: repository.owner });
    return { total, items: facts.map((f) => commentRepresentation(this.ctx.urls, f)) };
  }

  /** An issue's (or pull request's) timeline events, oldest first. */
  async events(principal: Principal, owner: string, repo: string, number: string, page: PageParams): Promise<{ total: number; items: IssueEvent[] }> {
    const { issue, repository } = await this.issueWithRepository(principal, owner, repo, number);
    const { total, events } = await eventPage(this.db, issue.id, { offset: page.offset, limit: page.perPage });
    const facts = await loadEventPageFacts(this.db, events, { repository, owner: repository.owner });
    return { total, items: facts.map((f) => eventRepresentation(this.ctx.urls, f)) };
  }

  /** One issue event of the repository (the `url` of each event). */
  async event(principal: Principal, owner: string, repo: string, eventId: string): Promise<IssueEvent> {
    const repository = await this.repositories.readable(principal, owner, repo);
    const event = await findEvent(this.db, repository.id, rowId(eventId));
    if (!event) throw notFound();
    const [facts] = await loadEventPageFacts(this.db, [event], { repository, owner: repository.owner });
    return eventRepresentation(this.ctx.urls, facts!);
  }
}
