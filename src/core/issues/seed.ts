// Seed-file keys `issues` and `comments`: the admin bodies plus `repository` ("owner/name") and, for
// comments, the issue `number`. Loading is idempotent: an issue with the same title by the same
// author, or a comment with the same body by the same author on the issue, is left alone.
import { Type } from 'typebox';
import type { Executor } from '../../db/index.ts';
import type { Context } from '../../platform/context.ts';
import { notFound } from '../../platform/errors.ts';
import { findAccount } from '../accounts/store.ts';
import { findRepository } from '../repositories/store.ts';
import { checkEntries } from '../../platform/seed.ts';
import { CommentBody, IssueBody } from './admin-routes.ts';
import { IssueWrites } from './writes.ts';
import { findCommentByBody, findIssue, findIssueByTitle } from './store.ts';

const Repository = Type.String({ pattern: '^[^/]+/[^/]+$', description: 'owner/name' });
const IssueEntry = Type.Object({ repository: Repository, ...IssueBody.properties });
const CommentEntry = Type.Object({ repository: Repository, number: Type.Integer({ minimum: 1 }), ...CommentBody.properties });

async function repositoryOf(ctx: Context, fullName: string) {
  const [owner, name] = fullName.split('/') as [string, string];
  const repository = await findRepository(ctx.db.kysely, owner, name);
  if (!repository) throw notFound(`Repository not found: ${fullName}`);
  return repository;
}

export async function seedIssues(ctx: Context, entries: unknown[], trx: Executor): Promise<void> {
  const service = new IssueWrites(ctx, trx);
  for (const { repository: fullName, ...input } of checkEntries(IssueEntry, 'issues', entries)) {
    const repository = await repositoryOf(ctx, fullName);
    const author = await findAccount(ctx.db.kysely, input.author);
    const existing = author
      ? await findIssueByTitle(ctx.db.kysely, repository.id, author.id, input.title)
      : undefined;
    if (!existing) await service.createIssue(repository.owner.login, repository.name, input);
  }
}

export async function seedComments(ctx: Context, entries: unknown[], trx: Executor): Promise<void> {
  const service = new IssueWrites(ctx, trx);
  for (const { repository: fullName, number, ...input } of checkEntries(CommentEntry, 'comments', entries)) {
    const repository = await repositoryOf(ctx, fullName);
    const issue = await findIssue(ctx.db.kysely, repository.id, number);
    const author = await findAccount(ctx.db.kysely, input.author);
    const existing = issue && author
      ? await findCommentByBody(ctx.db.kysely, issue.id, author.id, input.body)
      : undefined;
    if (!existing) await service.createComment(repository.owner.login, repository.name, number, input);
  }
}
