// Which permissions cover which webhook event, as on the platform: an app subscribes only to events
// its permissions cover, and an installation receives an event only while its current grant (the
// installation's permissions ∩ the app's requested permissions) covers it. Either level (`read` or
// `write`) of a permission covers its events. Documented in docs/webhooks.md.
import type { Permissions } from '../access/index.ts';

/** What covers an event: any one of `permissions`; an empty list means no permission is needed. */
export interface EventRule {
  permissions: readonly string[];
  /** For a subject that is a pull request (a comment on one), these cover it too. */
  onPullRequest?: readonly string[];
}

const NONE: EventRule = { permissions: [] };
const needs = (...permissions: string[]): EventRule => ({ permissions });

/**
 * Every event an app can subscribe to. `metadata` is granted to every installation (the platform
 * makes it mandatory), so its events need nothing more in practice; it stays named for the record.
 */
export const EVENT_RULES: Readonly<Record<string, EventRule>> = {
  // About the app and its installations: always delivered, no permission.
  installation: NONE,
  installation_repositories: NONE,
  installation_target: NONE,
  github_app_authorization: NONE,
  ping: NONE,

  // Repository metadata.
  repository: needs('metadata'),
  public: needs('metadata'),
  star: needs('metadata'),
  watch: needs('metadata'),
  label: needs('metadata'),

  // Contents.
  push: needs('contents'),
  create: needs('contents'),
  delete: needs('contents'),
  fork: needs('contents'),
  commit_comment: needs('contents'),
  gollum: needs('contents'),
  release: needs('contents'),
  repository_dispatch: needs('contents'),
  workflow_dispatch: needs('contents'),

  // Issues and pull requests. A comment on a pull request is an `issue_comment` too.
  issues: needs('issues'),
  issue_comment: { permissions: ['issues'], onPullRequest: ['issues', 'pull_requests'] },
  milestone: needs('issues', 'pull_requests'),
  pull_request: needs('pull_requests'),
  pull_request_review: needs('pull_requests'),
  pull_request_review_comment: needs('pull_requests'),
  pull_request_review_thread: needs('pull_requests'),

  // Repository administration.
  branch_protection_rule: needs('administration'),
  branch_protection_configuration: needs('administration'),
  repository_ruleset: needs('administration'),
  deploy_key: needs('administration'),
  security_and_analysis: needs('administration'),

  // Checks, statuses, deployments, Actions.
  check_run: needs('checks'),
  check_suite: needs('checks'),
  status: needs('statuses'),
  deployment: needs('deployments'),
  deployment_status: needs('deployments'),
  deployment_review: needs('deployments'),
  deployment_protection_rule: needs('deployments'),
  workflow_job: needs('actions'),
  workflow_run: needs('actions'),
  merge_group: needs('merge_queues'),

  // Other repository features.
  discussion: needs('discussions'),
  discussion_comment: needs('discussions'),
  page_build: needs('pages'),
  package: needs('packages'),
  registry_package: needs('packages'),
  project: needs('repository_projects', 'organization_projects'),
  project_card: needs('repository_projects', 'organization_projects'),
  project_column: needs('repository_projects', 'organization_projects'),
  projects_v2: needs('organization_projects'),
  projects_v2_item: needs('organization_projects'),

  // Security.
  code_scanning_alert: needs('security_events'),
  secret_scanning_alert: needs('secret_scanning_alerts'),
  secret_scanning_alert_location: needs('secret_scanning_alerts'),
  dependabot_alert: needs('vulnerability_alerts'),
  repository_vulnerability_alert: needs('vulnerability_alerts'),
  repository_advisory: needs('repository_advisories'),

  // Organization members and teams.
  member: needs('members'),
  membership: needs('members'),
  organization: needs('members'),
  team: needs('members'),
  team_add: needs('members'),
  org_block: needs('organization_user_blocking'),
  custom_property: needs('organization_custom_properties'),
};

/** Permissions every installation holds, whatever it was granted. */
const IMPLIED: readonly string[] = ['metadata'];

/** Events every installation's app receives whether it subscribes or not, as on the platform. */
const UNSUBSCRIBED: readonly string[] = ['installation', 'installation_repositories'];

export function deliveredWithoutSubscribing(event: string): boolean {
  return UNSUBSCRIBED.includes(event);
}

export function isKnownEvent(event: string): boolean {
  return Object.hasOwn(EVENT_RULES, event);
}

const holds = (permissions: Permissions, name: string) =>
  IMPLIED.includes(name) || permissions[name] === 'read' || permissions[name] === 'write';

/**
 * Whether `permissions` cover `event`. With `onPullRequest` unknown (an app's subscription, checked
 * for any subject), a permission covering the event on a pull request counts.
 */
export function coversEvent(permissions: Permissions, event: string, onPullRequest?: boolean): boolean {
  const rule = Object.hasOwn(EVENT_RULES, event) ? EVENT_RULES[event] : undefined;
  if (!rule) return false;
  const names = onPullRequest !== false && rule.onPullRequest ? rule.onPullRequest : rule.permissions;
  return names.length === 0 || names.some((name) => holds(permissions, name));
}

/** The events among `events` an app requesting `permissions` may not subscribe to, with why. */
export function uncoveredEvents(permissions: Permissions, events: readonly string[]): { event: string; message: string }[] {
  const out: { event: string; message: string }[] = [];
  for (const event of new Set(events)) {
    const rule = Object.hasOwn(EVENT_RULES, event) ? EVENT_RULES[event] : undefined;
    if (!rule) {
      out.push({ event, message: `${event} is not a webhook event` });
    } else if (!coversEvent(permissions, event)) {
      const names = rule.onPullRequest ?? rule.permissions;
      out.push({ event, message: `the ${event} event needs the ${names.join(' or ')} permission` });
    }
  }
  return out;
}
