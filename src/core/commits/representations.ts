// The platform's shapes of commits, branches, commit statuses and check runs: `commit` (with its
// `stats` and `files` on GET /repos/{owner}/{repo}/commits/{ref}), `branch-with-protection`,
// `status`, `combined-commit-status` and `check-run`; and what their webhook events add.
import { Type, type Static } from 'typebox';
import { isoSeconds } from '../../platform/clock.ts';
import { nodeId, type Urls } from '../../platform/urls.ts';
import { SimpleUser, simpleUser } from '../accounts/representations.ts';
import type { UserRow } from '../accounts/store.ts';
import { App } from '../apps/representations.ts';
import { MinimalRepository } from '../repositories/representations.ts';
import type { Commit } from '../repositories/git.ts';
import type { CheckRunRow, CheckSuiteRow, StatusRow } from './store.ts';

type Where = { owner: Pick<UserRow, 'login'>; repository: { name: string } };

const repositoryUrl = (urls: Urls, where: Where) => `${urls.api}/repos/${where.owner.login}/${where.repository.name}`;
const webUrl = (urls: Urls, where: Where) => `${urls.web}/${where.owner.login}/${where.repository.name}`;
/** A commit has no row id: its node id names the repository and the sha. */
const commitNodeId = (repositoryId: number, sha: string) => Buffer.from(`0:Commit${repositoryId}:${sha}`).toString('base64url');

const GitUser = Type.Object({ name: Type.String(), email: Type.String(), date: Type.String() });
const FileChange = Type.Object({
  sha: Type.String(),
  filename: Type.String(),
  status: Type.String({ description: '`added`, `removed`, `modified`, `renamed`, `copied`, `changed` or `unchanged`' }),
  additions: Type.Integer(),
  deletions: Type.Integer(),
  changes: Type.Integer(),
  blob_url: Type.String(),
  raw_url: Type.String(),
  contents_url: Type.String(),
});

export const CommitBody = Type.Object({
  url: Type.String(),
  sha: Type.String(),
  node_id: Type.String(),
  html_url: Type.String(),
  comments_url: Type.String(),
  commit: Type.Object({
    url: Type.String(),
    author: GitUser,
    committer: GitUser,
    message: Type.String(),
    comment_count: Type.Integer(),
    tree: Type.Object({ sha: Type.String(), url: Type.String() }),
    verification: Type.Object({ verified: Type.Boolean(), reason: Type.String(), signature: Type.Null(), payload: Type.Null(), verified_at: Type.Null() }),
  }),
  author: Type.Union([SimpleUser, Type.Null()]),
  committer: Type.Union([SimpleUser, Type.Null()]),
  parents: Type.Array(Type.Object({ sha: Type.String(), url: Type.String(), html_url: Type.String() })),
  stats: Type.Optional(Type.Object({ additions: Type.Integer(), deletions: Type.Integer(), total: Type.Integer() })),
  files: Type.Optional(Type.Array(FileChange)),
});
export type CommitBody = Static<typeof CommitBody>;

/**
 * A commit as the platform shows it; `withFiles` adds its `stats` and `files` (GET …/commits/{ref}).
 * Its `author` and `committer` accounts are null: codehost ties no commit email to a user.
 */
export function commitRepresentation(urls: Urls, where: Where & { repository: { id: number } }, commit: Commit, withFiles: boolean): CommitBody {
  const api = repositoryUrl(urls, where);
  const web = webUrl(urls, where);
  const body: CommitBody = {
    url: `${api}/commits/${commit.sha}`,
    sha: commit.sha,
    node_id: commitNodeId(where.repository.id, commit.sha),
    html_url: `${web}/commit/${commit.sha}`,
    comments_url: `${api}/commits/${commit.sha}/comments`,
    commit: {
      url: `${api}/git/commits/${commit.sha}`,
      author: commit.author,
      committer: commit.committer,
      message: commit.message,
      comment_count: 0,
      tree: { sha: commit.tree, url: `${api}/git/trees/${commit.tree}` },
      verification: { verified: false, reason: 'unsigned', signature: null, payload: null, verified_at: null },
    },
    author: null,
    committer: null,
    parents: commit.parents.map((sha) => ({ sha, url: `${api}/commits/${sha}`, html_url: `${web}/commit/${sha}` })),
  };
  if (!withFiles) return body;
  const additions = commit.files.reduce((n, f) => n + f.additions, 0);
  const deletions = commit.files.reduce((n, f) => n + f.deletions, 0);
  body.stats = { additions, deletions, total: additions + deletions };
  body.files = commit.files.map((file) => {
    const path = file.filename.split('/').map(encodeURIComponent).join('/');
    return {
      sha: file.sha,
      filename: file.filename,
      status: file.status,
      additions: file.additions,
      deletions: file.deletions,
      changes: file.additions + file.deletions,
      blob_url: `${web}/blob/${commit.sha}/${path}`,
      raw_url: `${web}/raw/${commit.sha}/${path}`,
      contents_url: `${api}/contents/${path}?ref=${commit.sha}`,
    };
  });
  return body;
}

export const Branch = Type.Object({
  name: Type.String(),
  commit: CommitBody,
  _links: Type.Object({ html: Type.String(), self: Type.String() }),
  protected: Type.Boolean(),
  protection: Type.Object({
    enabled: Type.Boolean(),
    required_status_checks: Type.Object({ enforcement_level: Type.String(), contexts: Type.Array(Type.String()), checks: Type.Array(Type.Object({ context: Type.String(), app_id: Type.Union([Type.Integer(), Type.Null()]) })) }),
  }),
  protection_url: Type.String(),
});

/** A branch and its head commit; codehost protects no branch. */
export function branchRepresentation(urls: Urls, where: Where & { repository: { id: number } }, name: string, head: Commit): Static<typeof Branch> {
  const self = `${repositoryUrl(urls, where)}/branches/${encodeURIComponent(name)}`;
  return {
    name,
    commit: commitRepresentation(urls, where, head, false),
    _links: { html: `${webUrl(urls, where)}/tree/${encodeURIComponent(name)}`, self },
    protected: false,
    protection: { enabled: false, required_status_checks: { enforcement_level: 'off', contexts: [], checks: [] } },
    protection_url: `${self}/protection`,
  };
}

// --- Statuses ------------------------------------------------------------------------------------

export const StatusState = Type.Union([Type.Literal('error'), Type.Literal('failure'), Type.Literal('pending'), Type.Literal('success')]);
export type StatusState = Static<typeof StatusState>;

const statusFields = {
  url: Type.String(),
  avatar_url: Type.Union([Type.String(), Type.Null()]),
  id: Type.Integer(),
  node_id: Type.String(),
  state: Type.String(),
  description: Type.Union([Type.String(), Type.Null()]),
  target_url: Type.Union([Type.String(), Type.Null()]),
  context: Type.String(),
  created_at: Type.String(),
  updated_at: Type.String(),
};

export const Status = Type.Object({ ...statusFields, creator: Type.Union([SimpleUser, Type.Null()]) });
export type Status = Static<typeof Status>;

export function statusRepresentation(urls: Urls, where: Where, row: StatusRow, creator: UserRow | undefined): Status {
  const user = creator ? simpleUser(urls, creator) : null;
  return {
    url: `${repositoryUrl(urls, where)}/statuses/${row.sha}`,
    avatar_url: user?.avatar_url ?? null,
    id: row.id,
    node_id: nodeId('StatusContext', row.id),
    state: row.state,
    description: row.description,
    target_url: row.target_url,
    context: row.context,
    created_at: isoSeconds(row.created_at),
    updated_at: isoSeconds(row.updated_at),
    creator: user,
  };
}

export const CombinedStatus = Type.Object({
  state: Type.String(),
  statuses: Type.Array(Type.Object({ ...statusFields, required: Type.Optional(Type.Union([Type.Boolean(), Type.Null()])) })),
  sha: Type.String(),
  total_count: Type.Integer(),
  repository: MinimalRepository,
  commit_url: Type.String(),
  url: Type.String(),
});

/**
 * The combined state of a commit's latest statuses, one per context: `failure` if any is an error
 * or a failure, else `pending` if any is pending (or there is none), else `success`.
 */
export function combinedState(states: readonly string[]): StatusState {
  if (states.some((s) => s === 'error' || s === 'failure')) return 'failure';
  if (!states.length || states.some((s) => s === 'pending')) return 'pending';
  return 'success';
}

// --- Check runs ----------------------------------------------------------------------------------

export const CheckStatus = Type.Union([Type.Literal('queued'), Type.Literal('in_progress'), Type.Literal('completed'), Type.Literal('waiting'), Type.Literal('requested'), Type.Literal('pending')]);
export const CheckConclusion = Type.Union([
  Type.Literal('action_required'), Type.Literal('cancelled'), Type.Literal('failure'), Type.Literal('neutral'),
  Type.Literal('success'), Type.Literal('skipped'), Type.Literal('stale'), Type.Literal('timed_out'),
]);

export const CheckRun = Type.Object({
  id: Type.Integer(),
  head_sha: Type.String(),
  node_id: Type.String(),
  external_id: Type.Union([Type.String(), Type.Null()]),
  url: Type.String(),
  html_url: Type.Union([Type.String(), Type.Null()]),
  details_url: Type.Union([Type.String(), Type.Null()]),
  status: Type.String(),
  conclusion: Type.Union([Type.String(), Type.Null()]),
  started_at: Type.Union([Type.String(), Type.Null()]),
  completed_at: Type.Union([Type.String(), Type.Null()]),
  output: Type.Object({
    title: Type.Union([Type.String(), Type.Null()]),
    summary: Type.Union([Type.String(), Type.Null()]),
    text: Type.Union([Type.String(), Type.Null()]),
    annotations_count: Type.Integer(),
    annotations_url: Type.String(),
  }),
  name: Type.String(),
  check_suite: Type.Union([Type.Object({ id: Type.Integer() }), Type.Null()]),
  app: Type.Union([App, Type.Null()]),
  pull_requests: Type.Array(Type.Object({})),
});
export type CheckRun = Static<typeof CheckRun>;

const time = (value: string | null) => (value === null ? null : isoSeconds(value));

export function checkRunRepresentation(urls: Urls, where: Where, row: CheckRunRow, app: Static<typeof App> | null): CheckRun {
  const url = `${repositoryUrl(urls, where)}/check-runs/${row.id}`;
  return {
    id: row.id,
    head_sha: row.head_sha,
    node_id: nodeId('CheckRun', row.id),
    external_id: row.external_id,
    url,
    html_url: `${webUrl(urls, where)}/runs/${row.id}`,
    details_url: row.details_url,
    status: row.status,
    conclusion: row.conclusion,
    started_at: time(row.started_at),
    completed_at: time(row.completed_at),
    output: { title: row.output_title, summary: row.output_summary, text: row.output_text, annotations_count: 0, annotations_url: `${url}/annotations` },
    name: row.name,
    check_suite: { id: row.check_suite_id },
    app,
    pull_requests: [],
  };
}

/** Which conclusion of a suite's completed runs wins, the first of these any run has. */
const SUITE_CONCLUSIONS = ['action_required', 'cancelled', 'timed_out', 'failure', 'stale', 'success', 'neutral', 'skipped'];

/** A suite's status and conclusion from its runs': completed once every run is, its conclusion the gravest. */
export function suiteState(runs: readonly { status: string; conclusion: string | null }[]): { status: string; conclusion: string | null } {
  if (runs.some((r) => r.status !== 'completed')) return { status: runs.some((r) => r.status === 'in_progress') ? 'in_progress' : 'queued', conclusion: null };
  const conclusions = new Set(runs.map((r) => r.conclusion));
  return { status: 'completed', conclusion: SUITE_CONCLUSIONS.find((c) => conclusions.has(c)) ?? null };
}

/** The check suite as a `check_run` event shows it. */
export function checkSuiteRepresentation(urls: Urls, where: Where, suite: CheckSuiteRow, state: { status: string; conclusion: string | null }, app: Static<typeof App> | null) {
  return {
    id: suite.id,
    node_id: nodeId('CheckSuite', suite.id),
    head_branch: suite.head_branch,
    head_sha: suite.head_sha,
    status: state.status,
    conclusion: state.conclusion,
    url: `${repositoryUrl(urls, where)}/check-suites/${suite.id}`,
    before: null,
    after: suite.head_sha,
    pull_requests: [],
    app,
    created_at: isoSeconds(suite.created_at),
    updated_at: isoSeconds(suite.updated_at),
  };
}
