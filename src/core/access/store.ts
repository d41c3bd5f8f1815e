// The SQL the access rules need, and no other: tokens (every kind is issued here, so the format and
// the stored hash have one source; every request finds its token by hash), apps by their credentials,
// installations' grants and the repositories they cover, organization roles, and the facts of who
// may access which repository. The rules over them are ./access.ts and the permission tables.
import { sql, type RawBuilder, type Selectable, type SqlBool } from 'kysely';
import type { Executor } from '../../db/index.ts';
import { cachedRead, cachedRow } from '../../db/changes.ts';
import { reusableQuery } from '../../db/prepared.ts';
import type { AppsTable } from '../../db/tables/apps.ts';
import type { RepositoryPermission } from '../../db/tables/repositories.ts';
import type { Clock } from '../../platform/clock.ts';
import { insertUnique, invalidField } from '../../platform/errors.ts';
import type { Permissions } from './permissions.ts';
import { generateToken, hashSecret, type TokenKind } from '../../platform/tokens.ts';

type AppRow = Selectable<AppsTable>;

export type OrgRole = 'owner' | 'member' | 'security_manager' | 'billing_manager';

export interface IssueTokenInput {
  kind: TokenKind;
  value?: string;
  user_id?: number | null;
  app_id?: number | null;
  installation_id?: number | null;
  authorization_id?: number | null;
  scopes?: string[];
  permissions?: Permissions;
  resource_owner_id?: number | null;
  repository_selection?: 'all' | 'selected';
  repository_ids?: number[];
  expires_at?: string | null;
  note?: string | null;
  note_url?: string | null;
}

/** Stores a new token's hash (the only form kept) and returns the token, shown once. */
export async function issueToken(db: Executor, clock: Clock, input: IssueTokenInput) {
  const token = input.value ?? generateToken(input.kind);
  if (input.expires_at !== undefined && input.expires_at !== null && Number.isNaN(Date.parse(input.expires_at))) {
    throw invalidField('Token', 'expires_at');
  }
  const now = clock.now().toISOString();
  const row = await insertUnique('Token', 'value', () =>
    db
      .insertInto('tokens')
      .values({
        kind: input.kind,
        hashed_token: hashSecret(token),
        token_last_eight: token.slice(-8),
        user_id: input.user_id ?? null,
        app_id: input.app_id ?? null,
        installation_id: input.installation_id ?? null,
        authorization_id: input.authorization_id ?? null,
        scopes: JSON.stringify(input.scopes ?? []),
        permissions: JSON.stringify(input.permissions ?? {}),
        resource_owner_id: input.resource_owner_id ?? null,
        repository_selection: input.repository_selection ?? 'all',
        repository_ids: JSON.stringify(input.repository_ids ?? []),
        note: input.note ?? null,
        note_url: input.note_url ?? null,
        fingerprint: null,
        expires_at: input.expires_at ? new Date(input.expires_at).toISOString() : null,
        created_at: now,
        updated_at: now,
      })
      .returningAll()
      .executeTakeFirstOrThrow(),
  );
  return { row, token };
}

/**
 * A token by the hash of its value, with what resolving it needs in the same round trip (every
 * request pays for this): its installation's account and grant, its app's requested permissions,
 * and its user.
 */
// Not async itself: it hands on the kept read's promise (no second promise on every request).
export function findTokenByHash(db: Executor, hashedToken: string) {
  return tokensByHash(db, hashedToken, hashedToken);
}

const tokenByHashQuery = reusableQuery('token_by_hash', (db, hashedToken: string) =>
  db
    .selectFrom('tokens')
    .leftJoin('installations', 'installations.id', 'tokens.installation_id')
    .leftJoin('apps', 'apps.id', 'tokens.app_id')
    .leftJoin('users', 'users.id', 'tokens.user_id')
    .select([
      'tokens.id', 'tokens.kind', 'tokens.user_id', 'tokens.app_id', 'tokens.installation_id', 'tokens.scopes',
      'tokens.permissions', 'tokens.resource_owner_id', 'tokens.repository_selection', 'tokens.repository_ids',
      'tokens.expires_at', 'installations.account_id', 'installations.permissions as installation_permissions',
      'installations.suspended_at as installation_suspended_at',
      'apps.permissions as app_permissions',
      'users.login', 'users.login_lower', 'users.type', 'users.name', 'users.email', 'users.site_admin',
      'users.created_at', 'users.updated_at', 'users.suspended_at', 'users.suspended_reason',
    ])
    .where('tokens.hashed_token', '=', hashedToken),
);

// Kept between requests while nothing changed (src/db/changes.ts): a revoked token stops at once here, within the window elsewhere.
const tokensByHash = cachedRow('token_by_hash', tokenByHashQuery);

/** What an operator may see of a token: never its hash. */
export interface ListedToken {
  id: number;
  kind: string;
  token_last_eight: string;
  user_id: number | null;
  login: string | null;
  app_slug: string | null;
  scopes: string;
  permissions: string;
  note: string | null;
  expires_at: string | null;
  created_at: string;
}

/** Tokens, oldest first, of one user when `userId` is given, one page at a time, with the total. */
export async function listTokens(db: Executor, filter: { userId?: number }, page: { limit: number; offset: number }): Promise<{ rows: ListedToken[]; total: number }> {
  let query = db.selectFrom('tokens');
  if (filter.userId !== undefined) query = query.where('tokens.user_id', '=', filter.userId);
  const rows = await query
    .leftJoin('apps', 'apps.id', 'tokens.app_id')
    .leftJoin('users', 'users.id', 'tokens.user_id')
    .select([
      'tokens.id', 'tokens.kind', 'tokens.token_last_eight', 'tokens.user_id', 'users.login', 'apps.slug as app_slug', 'tokens.scopes',
      'tokens.permissions', 'tokens.note', 'tokens.expires_at', 'tokens.created_at',
    ])
    .orderBy('tokens.id')
    .limit(page.limit)
    .offset(page.offset)
    .execute();
  const count = await query.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
  return { rows, total: Number(count.n) };
}

/**
 * Removes the tokens that have expired (the sweep: an app can mint 5,000 installation tokens an
 * hour, each good for one). An expired token answers 401 as an unknown one does, so nothing a
 * client sees changes. Revoked tokens are deleted when revoked. Returns how many went.
 */
export async function deleteExpiredTokens(db: Executor, now: string): Promise<number> {
  const result = await db.deleteFrom('tokens').where('expires_at', 'is not', null).where('expires_at', '<=', now).executeTakeFirst();
  return Number(result.numDeletedRows);
}

// --- Repository access facts (the rules that combine them: ./repository-permissions.ts) -----------

/** Stored repository permissions, weakest first. */
export const REPOSITORY_PERMISSIONS = ['pull', 'triage', 'push', 'maintain', 'admin'] as const satisfies readonly RepositoryPermission[];

/** A stored permission's rank (1 for pull ... 5 for admin), in SQL. */
const rank = (column: string) =>
  sql<number>`case ${sql.ref(column)} ${sql.join(REPOSITORY_PERMISSIONS.map((p, i) => sql`when ${sql.lit(p)} then ${sql.lit(i + 1)}`), sql` `)} else 0 end`;

/**
 * What gives a user access to repositories, for several repositories in one query: organization
 * roles on the owner, the direct (collaborator) permission, the best permission among the user's
 * teams, and whether its visibility lets the user read it (`readsByVisibility`). Repositories that do
 * not exist are left out.
 */
export async function repositoryAccessFacts(db: Executor, userId: number, repositoryIds: readonly number[]) {
  if (!repositoryIds.length) return [];
  const rows = await db
    .selectFrom('repositories as r')
    .select((eb) => [
      'r.id',
      'r.owner_id',
      'r.visibility',
      eb.selectFrom('org_memberships as m').select(sql<number>`1`.as('x')).whereRef('m.org_id', '=', 'r.owner_id').where('m.user_id', '=', userId).where('m.role', '=', 'owner').as('org_owner'),
      eb.selectFrom('org_memberships as m').select(sql<number>`1`.as('x')).whereRef('m.org_id', '=', 'r.owner_id').where('m.user_id', '=', userId).where('m.role', '=', 'member').as('org_member'),
      eb.selectFrom('org_memberships as m').select(sql<number>`1`.as('x')).whereRef('m.org_id', '=', 'r.owner_id').where('m.user_id', '=', userId).where('m.role', '=', 'security_manager').as('org_security_manager'),
      eb.selectFrom('repository_collaborators as c').select('c.permission').whereRef('c.repository_id', '=', 'r.id').where('c.user_id', '=', userId).as('collaborator'),
      eb
        .selectFrom('team_repositories as tr')
        .innerJoin('team_members as tm', 'tm.team_id', 'tr.team_id')
        .select(sql<number>`max(${rank('tr.permission')})`.as('x'))
        .whereRef('tr.repository_id', '=', 'r.id')
        .where('tm.user_id', '=', userId)
        .as('team_rank'),
      sql<number>`case when ${readsByVisibility(sql`${userId}`, 'r')} then 1 else 0 end`.as('visibility_reads'),
    ])
    .where('r.id', 'in', [...new Set(repositoryIds)])
    .execute();
  return rows.map((row) => ({
    id: row.id,
    owner_id: row.owner_id,
    visibility: row.visibility,
    orgOwner: row.org_owner !== null,
    orgMember: row.org_member !== null,
    orgSecurityManager: row.org_security_manager !== null,
    collaborator: row.collaborator as RepositoryPermission | null,
    team: row.team_rank ? REPOSITORY_PERMISSIONS[Number(row.team_rank) - 1]! : null,
    visibilityReads: Number(row.visibility_reads) === 1,
  }));
}

export type RepositoryAccessFacts = Awaited<ReturnType<typeof repositoryAccessFacts>>[number];

/** The organization roles that make a user a member of it; a billing manager is not one. */
const MEMBER_ROLES = sql.join((['owner', 'member', 'security_manager'] as const satisfies readonly OrgRole[]).map((role) => sql.lit(role)));

/**
 * The one visibility rule, for a repository (the alias of a `repositories` row): anyone reads a public
 * repository; an internal one is read by the members of every organization of its owner's enterprise.
 * Both the single read (`repositoryAccessFacts`) and the lists (`readableBy`) use it.
 */
function readsByVisibility(userId: RawBuilder<unknown>, repository: 'r' | 'ra') {
  const visibility = sql.ref(`${repository}.visibility`);
  return sql<SqlBool>`(${visibility} = 'public' or (${visibility} = 'internal' and exists (
    select 1 from organizations target
    inner join organizations other on other.enterprise_id = target.enterprise_id
    inner join org_memberships em on em.org_id = other.id
    where target.id = ${sql.ref(`${repository}.owner_id`)} and em.user_id = ${userId} and em.role in (${MEMBER_ROLES}))))`;
}

/** The user reaches a repository (of an owner) through an organization role, as a collaborator or through a team. */
export function memberAccess(userId: RawBuilder<unknown>, repositoryId: RawBuilder<unknown>, ownerId: RawBuilder<unknown>) {
  return sql<SqlBool>`(
    exists (select 1 from org_memberships om where om.org_id = ${ownerId} and om.user_id = ${userId} and om.role in (${MEMBER_ROLES}))
    or exists (select 1 from repository_collaborators rc where rc.repository_id = ${repositoryId} and rc.user_id = ${userId})
    or exists (select 1 from team_repositories tr inner join team_members tm on tm.team_id = tr.team_id where tr.repository_id = ${repositoryId} and tm.user_id = ${userId})
  )`;
}

/**
 * A condition, for a query over rows that name a repository (and a user): the user can read the
 * repository. Each is a value (a number), a column of the outer query (its name), or for the user an
 * expression (a reusable query's parameter). The same rules as ./repository-permissions.ts (every stored
 * permission reads), as a correlated EXISTS, so a list filters, pages and counts in its own query.
 */
export function readableBy(user: number | string | RawBuilder<number>, repository: number | string) {
  const userId = typeof user === 'string' ? sql.ref(user) : sql`${user}`;
  const repositoryId = typeof repository === 'number' ? sql`${repository}` : sql.ref(repository);
  return sql<SqlBool>`exists (select 1 from repositories ra where ra.id = ${repositoryId} and (
    ${readsByVisibility(userId, 'ra')}
    or ra.owner_id = ${userId}
    or ${memberAccess(userId, sql.ref('ra.id'), sql.ref('ra.owner_id'))}
  ))`;
}

/** Of some users, those who can read a repository (one query). */
export async function readersOf(db: Executor, repositoryId: number, userIds: readonly number[]): Promise<Set<number>> {
  if (!userIds.length) return new Set();
  const rows = await db
    .selectFrom('users')
    .select('id')
    .where('id', 'in', [...new Set(userIds)])
    .where(readableBy('users.id', repositoryId))
    .execute();
  return new Set(rows.map((r) => r.id));
}

// --- Apps, installations, organization roles ------------------------------------------------------

/** An app by its id or its client id (a JWT's `iss`, Basic credentials). */
export async function findAppBy(db: Executor, key: { id: number } | { clientId: string }): Promise<AppRow | undefined> {
  const query = db.selectFrom('apps').selectAll();
  return ('id' in key ? query.where('id', '=', key.id) : query.where('client_id', '=', key.clientId)).executeTakeFirst();
}

/**
 * An app by the client id Basic credentials present (every app token request), kept between
 * requests while nothing changed (src/db/changes.ts): a secret reset or an app deleted is seen at
 * once by this process, within CODEHOST_LOOKUP_CACHE_MS by others. Unknown client ids are not kept.
 */
export async function findAppByClientId(db: Executor, clientId: string): Promise<AppRow | undefined> {
  return appsByClientId(db, clientId, () => findAppBy(db, { clientId }));
}

const appsByClientId = cachedRead<string, AppRow | undefined>('app_by_client_id');

/** An app's installation on an account: its id, repository selection and granted permissions. */
export async function installationGrantOn(db: Executor, appId: number, accountId: number) {
  return db
    .selectFrom('installations')
    .select(['id', 'repository_selection', 'permissions'])
    .where('app_id', '=', appId)
    .where('account_id', '=', accountId)
    // A suspended installation grants its app's user tokens nothing.
    .where('suspended_at', 'is', null)
    .executeTakeFirst();
}

/** Whether an installation covers a repository: all of its account's, or the repository is among its selected ones (one query). */
export async function installationCovers(db: Executor, installationId: number, repositoryId: number): Promise<boolean> {
  const installation = await db
    .selectFrom('installations as i')
    .leftJoin('installation_repositories as r', (join) => join.onRef('r.installation_id', '=', 'i.id').on('r.repository_id', '=', repositoryId))
    .select(['i.repository_selection', 'r.repository_id'])
    .where('i.id', '=', installationId)
    .executeTakeFirst();
  return installation !== undefined && (installation.repository_selection === 'all' || installation.repository_id !== null);
}

export async function orgRoles(db: Executor, orgId: number, userId: number): Promise<Set<OrgRole>> {
  const rows = await db.selectFrom('org_memberships').select('role').where('org_id', '=', orgId).where('user_id', '=', userId).execute();
  return new Set(rows.map((r) => r.role as OrgRole));
}
