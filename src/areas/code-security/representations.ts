// Every response shape of code security: the configuration as seen from an organization or an
// enterprise, the default and repository records, and the bodies that build them from rows.
import { Type, type Static, type TSchema } from 'typebox';
import { MinimalRepository, minimalRepository, type RepositoryOwner, type RepositoryRow } from '../../core/repositories/representations.ts';
import { isoSeconds } from '../../platform/clock.ts';
import type { Urls } from '../../platform/urls.ts';
import {
  AdvancedSecurityValue, AttachmentStatus, DefaultForNewRepos, EnablementValue, ENABLEMENT_FIELDS, EnforcementValue, ReviewerMode, ReviewerType,
  RunnerType, TargetType, type EnablementField, type Enforcement, type Settings,
} from './features.ts';
import type { Scope } from './service.ts';
import type { ConfigurationRow } from './store.ts';

const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

type PlainField = Exclude<EnablementField, 'advanced_security'>;
const plainFields = ENABLEMENT_FIELDS.filter((field): field is PlainField => field !== 'advanced_security');

function enablementProperties<K extends string>(fields: readonly K[]) {
  return Object.fromEntries(fields.map((field) => [field, EnablementValue])) as { [P in K]: typeof EnablementValue };
}

export const Configuration = Type.Object({
  id: Type.Integer(),
  target_type: TargetType,
  name: Type.String(),
  description: Type.String(),
  advanced_security: AdvancedSecurityValue,
  ...enablementProperties(plainFields),
  dependency_graph_autosubmit_action_options: Type.Object({ labeled_runners: Type.Boolean() }),
  code_scanning_default_setup_options: Nullable(Type.Object({ runner_type: RunnerType, runner_label: Nullable(Type.String()) })),
  code_scanning_options: Nullable(Type.Object({ allow_advanced: Nullable(Type.Boolean()) })),
  secret_scanning_delegated_bypass_options: Type.Object({
    reviewers: Type.Array(Type.Object({
      security_configuration_id: Type.Integer(),
      reviewer_id: Type.Integer(),
      reviewer_type: ReviewerType,
      mode: ReviewerMode,
    })),
  }),
  enforcement: EnforcementValue,
  url: Type.String(),
  html_url: Type.String(),
  created_at: Type.String(),
  updated_at: Type.String(),
});
export type Configuration = Static<typeof Configuration>;

export const DefaultRecord = Type.Object({
  default_for_new_repos: DefaultForNewRepos,
  configuration: Configuration,
});

export const RepositoryRecord = Type.Object({
  status: AttachmentStatus,
  repository: MinimalRepository,
});

export const RepositoryConfiguration = Type.Object({
  status: AttachmentStatus,
  configuration: Configuration,
});

export const SetDefaultAnswer = Type.Object({ default_for_new_repos: DefaultForNewRepos, configuration: Configuration });
export const Accepted = Type.Object({}, { additionalProperties: true });

/** The API and web addresses of a configuration as seen from an organization or an enterprise. */
function addresses(urls: Urls, scope: Scope, id: number): { url: string; html_url: string } {
  if (scope.type === 'organization') {
    return {
      url: `${urls.api}/orgs/${scope.org.login}/code-security/configurations/${id}`,
      html_url: `${urls.web}/organizations/${scope.org.login}/settings/security_products/configurations/view/${id}`,
    };
  }
  return {
    url: `${urls.api}/enterprises/${scope.enterprise.slug}/code-security/configurations/${id}`,
    html_url: `${urls.web}/enterprises/${scope.enterprise.slug}/settings/security_analysis/configurations/${id}/edit`,
  };
}

export function configurationBody(urls: Urls, scope: Scope, row: ConfigurationRow): Configuration {
  const settings = JSON.parse(row.settings) as Settings;
  const fields = Object.fromEntries(ENABLEMENT_FIELDS.map((field) => [field, settings[field]])) as Pick<Settings, (typeof ENABLEMENT_FIELDS)[number]>;
  return {
    id: row.id,
    target_type: row.target_type as Configuration['target_type'],
    name: row.name,
    description: row.description,
    ...fields,
    dependency_graph_autosubmit_action_options: settings.dependency_graph_autosubmit_action_options,
    code_scanning_default_setup_options: settings.code_scanning_default_setup_options,
    code_scanning_options: settings.code_scanning_options,
    secret_scanning_delegated_bypass_options: {
      reviewers: settings.secret_scanning_delegated_bypass_options.reviewers.map((reviewer) => ({ security_configuration_id: row.id, ...reviewer })),
    },
    enforcement: row.enforcement as Enforcement,
    ...addresses(urls, scope, row.id),
    created_at: isoSeconds(row.created_at),
    updated_at: isoSeconds(row.updated_at),
  };
}

/** A repository of a configuration's list: its attachment's status and the repository. */
export function repositoryRecordBody(urls: Urls, { attachment, repository, owner }: { attachment: { status: string }; repository: RepositoryRow; owner: RepositoryOwner }): Static<typeof RepositoryRecord> {
  return { status: attachment.status as (typeof AttachmentStatus.enum)[number], repository: minimalRepository(urls, repository, owner) };
}

/** A default for new repositories, with its configuration. */
export function defaultRecordBody(urls: Urls, scope: Scope, record: { default_for_new_repos: Static<typeof DefaultForNewRepos>; configuration: ConfigurationRow }): Static<typeof DefaultRecord> {
  return { default_for_new_repos: record.default_for_new_repos, configuration: configurationBody(urls, scope, record.configuration) };
}

/** A repository's configuration: its attachment's status and the configuration. */
export function repositoryConfigurationBody(urls: Urls, found: { scope: Scope; attachment: { status: string }; configuration: ConfigurationRow }): Static<typeof RepositoryConfiguration> {
  return {
    status: found.attachment.status as (typeof AttachmentStatus.enum)[number],
    configuration: configurationBody(urls, found.scope, found.configuration),
  };
}
