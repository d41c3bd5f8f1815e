// SQL of reactions to issues (and pull requests) and to issue comments: a subject's page of
// reactions, one reaction, the counts the issue and comment representations roll up. Writes take the
// caller's transaction.
import type { ExpressionBuilder, Selectable } from 'kysely';
import type { Executor } from '../../db/index.ts';
import type { Database } from '../../db/schema.ts';
import { REACTION_CONTENTS, type ReactionContent, type ReactionsTable } from '../../db/tables/issues.ts';

export { REACTION_CONTENTS, type ReactionContent };
export type ReactionRow = Selectable<ReactionsTable>;

/** What a reaction is on: an issue (or pull request) by its id, or an issue comment by its id. */
export type ReactionSubject = { issueId: number } | { commentId: number };

/** How many reactions of each content a subject has. */
export type ReactionCounts = Record<ReactionContent, number>;

export const noReactions = (): ReactionCounts => ({ '+1': 0, '-1': 0, laugh: 0, confused: 0, heart: 0, hooray: 0, rocket: 0, eyes: 0 });

/** The condition of a subject's reactions. */
const on = (subject: ReactionSubject) => (eb: ExpressionBuilder<Database, 'reactions'>) =>
  ('issueId' in subject ? eb('issue_id', '=', subject.issueId) : eb('comment_id', '=', subject.commentId));

/** One page of a subject's reactions, oldest first, of one content when given; and how many there are (two queries). */
export async function reactionPage(
  db: Executor,
  subject: ReactionSubject,
  content: ReactionContent | undefined,
  page: { offset: number; limit: number },
): Promise<{ total: number; reactions: ReactionRow[] }> {
  let base = db.selectFrom('reactions').where(on(subject));
  if (content !== undefined) base = base.where('content', '=', content);
  const [count, reactions] = await Promise.all([
    base.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
    base.selectAll().orderBy('id').limit(page.limit).offset(page.offset).execute(),
  ]);
  return { total: Number(count.n), reactions };
}

/** The reaction of that id on the subject, if it is there. */
export async function findReaction(db: Executor, subject: ReactionSubject, reactionId: number): Promise<ReactionRow | undefined> {
  return db.selectFrom('reactions').selectAll().where('id', '=', reactionId).where(on(subject)).executeTakeFirst();
}

/**
 * The user's reaction of that content on the subject: made now (`created` true), or the one they
 * made before. Two at once make one: the second's insert does nothing and both read the one row.
 */
export async function addReaction(
  trx: Executor,
  subject: ReactionSubject,
  userId: number,
  content: ReactionContent,
  now: string,
): Promise<{ reaction: ReactionRow; created: boolean }> {
  const values = 'issueId' in subject
    ? { issue_id: subject.issueId, comment_id: null }
    : { issue_id: null, comment_id: subject.commentId };
  const inserted = await trx.insertInto('reactions')
    .values({ ...values, user_id: userId, content, created_at: now })
    .onConflict((c) => c.columns('issueId' in subject ? ['issue_id', 'user_id', 'content'] : ['comment_id', 'user_id', 'content']).doNothing())
    .returningAll()
    .executeTakeFirst();
  if (inserted) return { reaction: inserted, created: true };
  const held = await trx.selectFrom('reactions').selectAll().where(on(subject)).where('user_id', '=', userId).where('content', '=', content).executeTakeFirstOrThrow();
  return { reaction: held, created: false };
}

export async function deleteReaction(trx: Executor, reactionId: number): Promise<void> {
  await trx.deleteFrom('reactions').where('id', '=', reactionId).execute();
}

/** The counts of each of `issueIds`' own reactions (not their comments'), one grouped query for them all. */
export const issueReactionCounts = (db: Executor, issueIds: readonly number[]) => countsBy(db, 'issue_id', issueIds);

/** The counts of each of `commentIds`' reactions, one grouped query for them all. */
export const commentReactionCounts = (db: Executor, commentIds: readonly number[]) => countsBy(db, 'comment_id', commentIds);

async function countsBy(db: Executor, subject: 'issue_id' | 'comment_id', ids: readonly number[]): Promise<Map<number, ReactionCounts>> {
  const out = new Map(ids.map((id) => [id, noReactions()]));
  if (!ids.length) return out;
  const rows = await db.selectFrom('reactions')
    .select((eb) => [eb.ref(subject).as('subject_id'), 'content', eb.fn.countAll<number>().as('n')])
    .where(subject, 'in', [...new Set(ids)])
    .groupBy([subject, 'content'])
    .execute();
  for (const row of rows) out.get(row.subject_id!)![row.content] = Number(row.n);
  return out;
}

