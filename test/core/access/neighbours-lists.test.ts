// Neighbours of a direct read (issue 43): every list that shows a resource beside the read the
// access tests pin. One table per rule; a row names the direct read, the list, how the list shows the
// resource, the callers the direct read hides it from (404) and one who reads it. Each row fails both
// ways: a hidden caller who finds the resource in the list (a list without the read's filter), and a
// reader who does not (a list that hides everything passes no row).
// The world: private, internal and public repositories of an organization in an enterprise, a user's
// own private and public ones, a collaborator who lost his access (removed), installations of two
// apps, a fine-grained token and an installation token narrowed to one repository.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { install, mintInstallationToken } from '../../helpers/app-credentials.ts';
import { appJwt, classicToken, createApp, type Permissions } from '../../helpers/credentials.ts';
import { startServer, type TestServer } from '../../helpers/server.ts';

// --- The callers ---------------------------------------------------------------------------------
const CALLERS = {
  anon: 'no credentials',
  owner: 'ana: owns acme (and acme-ent, globex) and her own repositories; classic token, every scope',
  outsider: 'olga: no relation to any of it',
  member: "bob: acme member (reads acme/inner, and acme/secret by the organization's base permission)",
  entMember: 'eve: member of initech, the other organization of acme-ent (reads acme/inner)',
  collab: 'dora: collaborator on acme/secret (pull)',
  exCollab: 'carl: was a collaborator on acme/secret (pull), removed',
  instAll: 'installation token of list-app on acme, every repository',
  instSome: 'installation token of list-app on acme, narrowed to acme/open',
  fgSome: "ana's fine-grained token on acme, selected repository acme/open only",
  jwt: "list-app's JWT",
  jwtOther: "other-app's JWT (installed on globex only)",
} as const;
type Caller = keyof typeof CALLERS;
const credentials = {} as Record<Caller, string | null>;

let server: TestServer;
const ALL_SCOPES = ['repo', 'admin:org', 'admin:enterprise', 'notifications', 'user'];
const APP_PERMISSIONS: Permissions = {
  organization_administration: 'read', administration: 'read', organization_issue_types: 'read', members: 'read', metadata: 'read', issues: 'read', pull_requests: 'read',
};
const ids = {
  secret: 0, open: 0, inner: 0, diary: 0, configuration: 0, enterpriseConfiguration: 0, globexConfiguration: 0,
  issue: 0, comment: 0, event: 0, listInstallation: 0, otherInstallation: 0,
  anaThread: '', carlThread: '', doraThread: '', migration: 0, olgaMigration: 0,
};

// --- The rows ------------------------------------------------------------------------------------
/** Does the answer hold, anywhere in it, an object the predicate picks? */
type Pick = (node: Record<string, unknown>, caller: Caller) => boolean;
function holds(value: unknown, pick: Pick, caller: Caller): boolean {
  if (Array.isArray(value)) return value.some((item) => holds(item, pick, caller));
  if (value && typeof value === 'object') return pick(value as Record<string, unknown>, caller) || Object.values(value).some((item) => holds(item, pick, caller));
  return false;
}
const repository = (fullName: string): Pick => (node) => node.full_name === fullName;
/** An object of one kind (it has the field `kind`: a thread its subject, a comment its body...) by its id. */
const withId = (kind: string, id: (caller: Caller) => number | string): Pick => (node, caller) => kind in node && String(node.id) === String(id(caller));

interface Row {
  /** The direct read whose 404 hides the resource. */
  read: () => string;
  /** The list (or search) that shows the same resource. */
  list: () => string;
  /** Whether the list's answer shows the resource. */
  shows: Pick;
  /** Callers the direct read answers 404. */
  hidden: Caller[];
  /** A caller who reads it directly and must find it in the list (the positive control). */
  reader: Caller;
  /** Where the reader reads and lists it, when not at the same paths (another organization's object, at its own organization). */
  readerAt?: { read: () => string; list: () => string };
}
type Table = Record<string, Row>;

const ORG_CS = '/orgs/acme/code-security/configurations';
const ENT_CS = '/enterprises/acme-ent/code-security/configurations';
const REPO_HIDERS: Caller[] = ['anon', 'outsider', 'entMember', 'exCollab', 'instSome', 'fgSome'];
/**
 * The organization-level lists of repositories (a code security configuration's, the updater's access)
 * answer a token narrowed to selected repositories (instSome, fgSome) with repositories outside its
 * selection, which its direct read hides (404): the organization's own settings, read with the
 * organization permission the route names, as the platform's organization-level operations are
 * (docs/permissions.md, "Credential kinds"); the test at the end pins it.
 */
const ORG_LIST_HIDERS: Caller[] = ['anon', 'outsider', 'entMember', 'exCollab'];

/** Rule: a repository the direct read hides (private, internal, lost access, outside a token's selection) is in no list. */
const REPOSITORY_LISTS: Table = {
  'GET /orgs/{org}/repos, private repository': { read: () => '/repos/acme/secret', list: () => '/orgs/acme/repos?per_page=100', shows: repository('acme/secret'), hidden: REPO_HIDERS, reader: 'collab' },
  'GET /orgs/{org}/repos, private repository, through the installation': { read: () => '/repos/acme/secret', list: () => '/orgs/acme/repos?per_page=100', shows: repository('acme/secret'), hidden: ['instSome'], reader: 'instAll' },
  'GET /orgs/{org}/repos, internal repository': { read: () => '/repos/acme/inner', list: () => '/orgs/acme/repos?per_page=100', shows: repository('acme/inner'), hidden: ['anon', 'outsider', 'exCollab', 'instSome', 'fgSome'], reader: 'entMember' },
  'GET /orgs/{org}/repos, internal repository, organization member': { read: () => '/repos/acme/inner', list: () => '/orgs/acme/repos?per_page=100', shows: repository('acme/inner'), hidden: ['outsider'], reader: 'member' },
  'GET /users/{username}/repos, private repository': { read: () => '/repos/ana/diary', list: () => '/users/ana/repos?type=all&per_page=100', shows: repository('ana/diary'), hidden: ['anon', 'outsider', 'member', 'fgSome', 'instAll'], reader: 'owner' },
  'GET /users/{username}/repos, public repository': { read: () => '/repos/ana/blog', list: () => '/users/ana/repos?type=all&per_page=100', shows: repository('ana/blog'), hidden: [], reader: 'anon' },
  'GET /installation/repositories, private repository': { read: () => '/repos/acme/secret', list: () => '/installation/repositories?per_page=100', shows: repository('acme/secret'), hidden: ['instSome'], reader: 'instAll' },
  'GET /installation/repositories, internal repository': { read: () => '/repos/acme/inner', list: () => '/installation/repositories?per_page=100', shows: repository('acme/inner'), hidden: ['instSome'], reader: 'instAll' },
  'GET /orgs/{org}/code-security/configurations/{configuration_id}/repositories, private repository': {
    read: () => '/repos/acme/secret', list: () => `${ORG_CS}/${ids.configuration}/repositories?per_page=100`, shows: repository('acme/secret'), hidden: ORG_LIST_HIDERS, reader: 'owner',
  },
  'GET /orgs/{org}/code-security/configurations/{configuration_id}/repositories, internal repository': {
    read: () => '/repos/acme/inner', list: () => `${ORG_CS}/${ids.configuration}/repositories?per_page=100`, shows: repository('acme/inner'), hidden: ['outsider', 'exCollab'], reader: 'instAll',
  },
  'GET /enterprises/{enterprise}/code-security/configurations/{configuration_id}/repositories, private repository': {
    read: () => '/repos/acme/hush', list: () => `${ENT_CS}/${ids.enterpriseConfiguration}/repositories?per_page=100`, shows: repository('acme/hush'), hidden: ORG_LIST_HIDERS, reader: 'owner',
  },
  'GET /orgs/{org}/updater/repository-access, private repository': {
    read: () => '/repos/acme/secret', list: () => '/orgs/acme/updater/repository-access', shows: repository('acme/secret'), hidden: ORG_LIST_HIDERS, reader: 'owner',
  },
  'GET /user/migrations/{migration_id}/repositories, private repository': {
    read: () => '/repos/ana/diary', list: () => `/user/migrations/${ids.migration}/repositories`, shows: repository('ana/diary'), hidden: ['fgSome', 'outsider', 'anon'], reader: 'owner',
  },
  'GET /user/migrations, private repository': {
    read: () => '/repos/ana/diary', list: () => '/user/migrations', shows: repository('ana/diary'), hidden: ['fgSome', 'outsider', 'anon'], reader: 'owner',
  },
  'GET /notifications, private repository, access lost': {
    read: () => '/repos/acme/secret', list: () => '/notifications?all=true', shows: repository('acme/secret'), hidden: ['exCollab'], reader: 'collab',
  },
  'GET /repos/{owner}/{repo}/notifications, private repository, access lost': {
    read: () => '/repos/acme/secret', list: () => '/repos/acme/secret/notifications?all=true', shows: repository('acme/secret'), hidden: ['exCollab', 'outsider'], reader: 'collab',
  },
};

const IN_SECRET: Caller[] = ['anon', 'outsider', 'entMember', 'exCollab', 'instSome', 'fgSome'];
/** Rule: what is in a private repository (issues, pulls, comments, events, issue types) is hidden with it from every list. */
const IN_REPOSITORY_LISTS: Table = {
  'GET /repos/{owner}/{repo}/issues/{issue_number}/comments, the comment': {
    read: () => `/repos/acme/secret/issues/comments/${ids.comment}`, list: () => `/repos/acme/secret/issues/${ids.issue}/comments`, shows: withId('body', () => ids.comment), hidden: IN_SECRET, reader: 'collab',
  },
  'GET /repos/{owner}/{repo}/issues/{issue_number}/events, the event': {
    read: () => `/repos/acme/secret/issues/events/${ids.event}`, list: () => `/repos/acme/secret/issues/${ids.issue}/events`, shows: withId('event', () => ids.event), hidden: IN_SECRET, reader: 'collab',
  },
  'GET /repos/{owner}/{repo}/issues/{issue_number}/events, the event, through the installation': {
    read: () => `/repos/acme/secret/issues/events/${ids.event}`, list: () => `/repos/acme/secret/issues/${ids.issue}/events`, shows: withId('event', () => ids.event), hidden: ['instSome'], reader: 'instAll',
  },
  'GET /repos/{owner}/{repo}/issue-types, the repository': {
    read: () => '/repos/acme/secret', list: () => '/repos/acme/secret/issue-types', shows: () => true, hidden: IN_SECRET, reader: 'collab',
  },
  'GET /notifications, the issue thread': {
    read: () => `/repos/acme/secret/issues/${ids.issue}`, list: () => '/notifications?all=true', shows: (node) => (node.subject as { url?: string } | undefined)?.url === `${server.apiUrl}/repos/acme/secret/issues/${ids.issue}`, hidden: ['exCollab'], reader: 'collab',
  },
};

/** Rule: a notification thread that its direct read hides (another user's, or on a repository the user lost) is in no list. */
const THREAD_LISTS: Table = {
  'GET /notifications, another user\'s thread': { read: () => `/notifications/threads/${ids.anaThread}`, list: () => '/notifications?all=true', shows: withId('subject', () => ids.anaThread), hidden: ['outsider', 'collab', 'exCollab'], reader: 'owner' },
  'GET /repos/{owner}/{repo}/notifications, another user\'s thread': { read: () => `/notifications/threads/${ids.anaThread}`, list: () => '/repos/acme/secret/notifications?all=true', shows: withId('subject', () => ids.anaThread), hidden: ['outsider', 'collab', 'exCollab'], reader: 'owner' },
  // carl's own thread, on the repository he lost: his direct read of it is a 404, and so is it in his list; dora, still a collaborator, reads hers.
  'GET /notifications, own thread, repository access lost': {
    read: () => `/notifications/threads/${ids.carlThread}`, list: () => '/notifications?all=true', shows: withId('subject', (caller) => (caller === 'collab' ? ids.doraThread : ids.carlThread)), hidden: ['exCollab'], reader: 'collab',
    readerAt: { read: () => `/notifications/threads/${ids.doraThread}`, list: () => '/notifications?all=true' },
  },
  'GET /repos/{owner}/{repo}/notifications, own thread, repository access lost': {
    read: () => `/notifications/threads/${ids.carlThread}`, list: () => '/repos/acme/secret/notifications?all=true', shows: withId('subject', (caller) => (caller === 'collab' ? ids.doraThread : ids.carlThread)), hidden: ['exCollab'], reader: 'collab',
    readerAt: { read: () => `/notifications/threads/${ids.doraThread}`, list: () => '/repos/acme/secret/notifications?all=true' },
  },
};

/** Rule: an installation of another app, a configuration of another organization, another user's migration: no list shows it. */
const OWNED_LISTS: Table = {
  'GET /app/installations, another app\'s installation': { read: () => `/app/installations/${ids.listInstallation}`, list: () => '/app/installations', shows: withId('account', () => ids.listInstallation), hidden: ['jwtOther'], reader: 'jwt' },
  'GET /orgs/{org}/code-security/configurations, another organization\'s configuration': {
    read: () => `${ORG_CS}/${ids.configuration}`, list: () => ORG_CS, shows: withId('target_type', () => ids.configuration), hidden: ['outsider', 'exCollab'], reader: 'owner',
  },
  'GET /orgs/{org}/code-security/configurations, globex\'s configuration at acme': {
    read: () => `${ORG_CS}/${ids.globexConfiguration}`, list: () => ORG_CS, shows: withId('target_type', () => ids.globexConfiguration), hidden: ['owner', 'instAll'], reader: 'owner',
    readerAt: { read: () => `/orgs/globex/code-security/configurations/${ids.globexConfiguration}`, list: () => '/orgs/globex/code-security/configurations' },
  },
  'GET /user/migrations, another user\'s migration': { read: () => `/user/migrations/${ids.olgaMigration}`, list: () => '/user/migrations', shows: withId('repositories', () => ids.olgaMigration), hidden: ['owner'], reader: 'outsider' },
};

const TABLES: Record<string, Table> = {
  'a hidden repository is in no list': REPOSITORY_LISTS,
  'what is in a hidden repository is in no list': IN_REPOSITORY_LISTS,
  'a hidden notification thread is in no list': THREAD_LISTS,
  'another owner\'s object is in no list': OWNED_LISTS,
};

// --- The world -----------------------------------------------------------------------------------
async function as(caller: Caller, path: string) {
  return server.api('GET', path, credentials[caller] ? { authorization: credentials[caller]! } : {});
}

before(async () => {
  server = await startServer({ CODEHOST_RATE_LIMIT: '1000000', CODEHOST_RATE_LIMIT_ANONYMOUS: '1000000', CODEHOST_MIGRATION_EXPORTS_PER_USER: '1000000' });
  for (const login of ['ana', 'olga', 'bob', 'eve', 'dora', 'carl']) await server.admin('POST', '/users', { login });
  await server.admin('POST', '/enterprises', { slug: 'acme-ent', owners: ['ana'] });
  await server.admin('POST', '/orgs', { login: 'acme', enterprise: 'acme-ent', owners: ['ana'], members: ['bob'] });
  await server.admin('POST', '/orgs', { login: 'initech', enterprise: 'acme-ent', owners: ['ana'], members: ['eve'] });
  await server.admin('POST', '/orgs', { login: 'globex', owners: ['ana'] });
  ids.secret = (await server.admin('POST', '/repos', { owner: 'acme', name: 'secret', visibility: 'private' })).id;
  ids.open = (await server.admin('POST', '/repos', { owner: 'acme', name: 'open' })).id;
  ids.inner = (await server.admin('POST', '/repos', { owner: 'acme', name: 'inner', visibility: 'internal' })).id;
  await server.admin('POST', '/repos', { owner: 'acme', name: 'hush', visibility: 'private' });
  ids.diary = (await server.admin('POST', '/repos', { owner: 'ana', name: 'diary', visibility: 'private', init_git: true })).id;
  await server.admin('POST', '/repos', { owner: 'ana', name: 'blog', init_git: true });
  await server.admin('POST', '/repos', { owner: 'olga', name: 'notes', init_git: true });
  for (const login of ['dora', 'carl']) await server.admin('PUT', `/repos/acme/secret/collaborators/${login}`, { permission: 'pull' });

  const owner = await classicToken(server, 'ana', ALL_SCOPES);
  const olga = await classicToken(server, 'olga', ALL_SCOPES);
  const call = async (token: string, method: string, path: string, body?: unknown) => {
    const response = await server.api(method, path, { token, body });
    assert.ok(response.status < 300, `${method} ${path}: ${response.status} ${response.text}`);
    return response.body;
  };
  ids.configuration = (await call(owner, 'POST', ORG_CS, { name: 'Baseline' })).id;
  ids.globexConfiguration = (await call(owner, 'POST', '/orgs/globex/code-security/configurations', { name: 'Globex baseline' })).id;
  await call(owner, 'POST', `${ORG_CS}/${ids.configuration}/attach`, { scope: 'selected', selected_repository_ids: [ids.secret, ids.inner, ids.open] });
  ids.enterpriseConfiguration = (await call(owner, 'POST', ENT_CS, { name: 'Enterprise baseline' })).id;
  await server.drain();
  // The enterprise's configuration on every repository without one: acme/hush (private) among them.
  await call(owner, 'POST', `${ENT_CS}/${ids.enterpriseConfiguration}/attach`, { scope: 'all_without_configurations' });
  await server.drain();
  await call(owner, 'PATCH', '/orgs/acme/updater/repository-access', { repository_ids_to_add: [ids.secret, ids.open] });
  await call(owner, 'POST', '/orgs/acme/issue-types', { name: 'Bug', is_enabled: true });

  const listApp = await createApp(server, 'list-app', APP_PERMISSIONS);
  const otherApp = await createApp(server, 'other-app', APP_PERMISSIONS);
  ids.listInstallation = await install(server, listApp, 'acme');
  ids.otherInstallation = await install(server, otherApp, 'globex');

  const issue = await server.admin('POST', '/repos/acme/secret/issues', { author: 'ana', title: 'An issue' });
  ids.issue = issue.number;
  ids.comment = (await server.admin('POST', `/repos/acme/secret/issues/${issue.number}/comments`, { author: 'ana', body: 'A comment' })).id;
  await server.admin('PATCH', `/repos/acme/secret/issues/${issue.number}`, { actor: 'ana', assignees: ['ana'] });
  const thread = async (login: string) => (await server.admin('POST', '/notifications', {
    login, repository: 'acme/secret', reason: 'mention', subject: { type: 'Issue', title: 'A thread', url: `${server.apiUrl}/repos/acme/secret/issues/${issue.number}` },
  })).id as string;
  ids.anaThread = await thread('ana');
  ids.carlThread = await thread('carl');
  ids.doraThread = await thread('dora');
  ids.migration = (await call(owner, 'POST', '/user/migrations', { repositories: ['diary', 'blog'], exclude_attachments: true })).id;
  ids.olgaMigration = (await call(olga, 'POST', '/user/migrations', { repositories: ['notes'], exclude_attachments: true })).id;
  await server.drain();
  ids.event = (await call(owner, 'GET', `/repos/acme/secret/issues/${issue.number}/events`))[0].id;

  Object.assign(credentials, {
    anon: null,
    owner: `Bearer ${owner}`,
    outsider: `Bearer ${olga}`,
    member: `Bearer ${await classicToken(server, 'bob', ALL_SCOPES)}`,
    entMember: `Bearer ${await classicToken(server, 'eve', ALL_SCOPES)}`,
    collab: `Bearer ${await classicToken(server, 'dora', ALL_SCOPES)}`,
    exCollab: `Bearer ${await classicToken(server, 'carl', ALL_SCOPES)}`,
    instAll: `Bearer ${await mintInstallationToken(server, listApp, ids.listInstallation)}`,
    instSome: `Bearer ${await mintInstallationToken(server, listApp, ids.listInstallation, { repositories: ['open'] })}`,
    fgSome: `Bearer ${(await server.admin('POST', '/tokens', { login: 'ana', kind: 'fine_grained', resource_owner: 'acme', repositories: ['open'], permissions: { ...APP_PERMISSIONS } })).token}`,
    jwt: `Bearer ${await appJwt(server, listApp)}`,
    jwtOther: `Bearer ${await appJwt(server, otherApp)}`,
  } satisfies Record<Caller, string | null>);
  // carl loses his access: his thread and the repository stay, his reads of them end.
  await server.admin('DELETE', '/repos/acme/secret/collaborators/carl');
});

after(async () => {
  await server?.close();
});

// --- The run -------------------------------------------------------------------------------------
for (const [rule, table] of Object.entries(TABLES)) {
  for (const [name, row] of Object.entries(table)) {
    test(`${rule}: ${name}`, async (t) => {
      for (const caller of row.hidden) {
        await t.test(`hidden from ${caller}`, async () => {
          const read = await as(caller, row.read());
          assert.equal(read.status, 404, `the direct read ${row.read()} hides it from ${caller} (${CALLERS[caller]}): ${read.text.slice(0, 200)}`);
          const list = await as(caller, row.list());
          assert.ok(list.status < 300 ? !holds(list.body, row.shows, caller) : list.status >= 400, `${row.list()} as ${caller} (${list.status}) shows what ${row.read()} hides: ${list.text.slice(0, 300)}`);
        });
      }
      await t.test(`shown to ${row.reader}`, async () => {
        const at = row.readerAt ?? row;
        const read = await as(row.reader, at.read());
        assert.equal(read.status, 200, `the direct read ${at.read()} as ${row.reader}: ${read.text.slice(0, 200)}`);
        const list = await as(row.reader, at.list());
        assert.equal(list.status, 200, `${at.list()} as ${row.reader}: ${list.text.slice(0, 200)}`);
        assert.ok(holds(list.body, row.shows, row.reader), `${at.list()} as ${row.reader} (${CALLERS[row.reader]}) shows it: ${list.text.slice(0, 300)}`);
      });
    });
  }
}

// The organization's own settings list the organization's repositories whatever a token's
// repository selection (docs/permissions.md): a narrowed token with the organization permission
// finds acme/secret there, which its direct read hides.
const ORGANIZATION_SETTINGS: Record<string, () => string> = {
  'GET /orgs/{org}/code-security/configurations/{configuration_id}/repositories': () => `${ORG_CS}/${ids.configuration}/repositories?per_page=100`,
  'GET /orgs/{org}/updater/repository-access': () => '/orgs/acme/updater/repository-access',
};
for (const [name, list] of Object.entries(ORGANIZATION_SETTINGS)) {
  for (const caller of ['instSome', 'fgSome'] as const) {
    test(`the organization's settings, whatever the selection: ${name} as ${caller}`, async () => {
      assert.equal((await as(caller, '/repos/acme/secret')).status, 404);
      const answer = await as(caller, list());
      assert.equal(answer.status, 200, answer.text.slice(0, 200));
      assert.ok(holds(answer.body, repository('acme/secret'), caller), answer.text.slice(0, 300));
    });
  }
}
