// A pull request's requested reviewers as a change applies them (IssueWrites.changeIssue): the users
// and teams a removal names, and the requests that a change adds and removes, decided on the
// requests as they are under the pull request's lock.
import type { Executor } from '../../db/index.ts';
import { findTeam, usersByLogin } from '../accounts/store.ts';

/** Users and teams, by id. */
export interface Requested {
  userIds: number[];
  teamIds: number[];
}

/**
 * The ids of the users and teams named (a team by `slug` or `org/slug` of the repository's owner);
 * names of no one are passed over, as removing them changes nothing.
 */
export async function namedRequests(db: Executor, owner: { id: number; login: string }, logins?: readonly string[], slugs?: readonly string[]): Promise<Requested> {
  const users = logins?.length ? await usersByLogin(db, logins) : [];
  const teamIds: number[] = [];
  const org = `${owner.login}/`.toLowerCase();
  for (const name of new Set((slugs ?? []).map((s) => s.toLowerCase()))) {
    const team = await findTeam(db, owner.id, name.startsWith(org) ? name.slice(org.length) : name);
    if (team) teamIds.push(team.id);
  }
  return { userIds: users.map((u) => u.id), teamIds };
}

/**
 * What a change requests and removes: the current requests replaced by `wanted` where it is given
 * (users and teams apart), then `added` added and `removed` taken away.
 */
export function requestChange(current: Requested, change: { wanted: Requested; users: boolean; teams: boolean; added: Requested; removed: Requested }): { requested: Requested; removed: Requested } {
  const target = (given: boolean, wanted: number[], now: number[], added: number[], removed: number[]) =>
    [...new Set([...(given ? wanted : now), ...added])].filter((id) => !removed.includes(id));
  const users = target(change.users, change.wanted.userIds, current.userIds, change.added.userIds, change.removed.userIds);
  const teams = target(change.teams, change.wanted.teamIds, current.teamIds, change.added.teamIds, change.removed.teamIds);
  const without = (values: number[], gone: number[]) => values.filter((v) => !gone.includes(v));
  return {
    requested: { userIds: without(users, current.userIds), teamIds: without(teams, current.teamIds) },
    removed: { userIds: without(current.userIds, users), teamIds: without(current.teamIds, teams) },
  };
}
