// The representations (configuration, default record, repository record) and the request bodies
// shared by the enterprise and organization operations.
import { Type, type Static, type TOptional, type TSchema } from 'typebox';
import { MinimalRepository } from '../../core/repositories/representations.ts';
import { ENABLEMENT_FIELDS, type EnablementField } from './features.ts';

const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

export const EnablementValue = Type.Enum(['enabled', 'disabled', 'not_set'], { description: 'Enablement of the feature' });
export const AdvancedSecurityValue = Type.Enum(['enabled', 'disabled', 'not_set', 'code_security', 'secret_protection'], {
  description: 'Enablement of advanced security; `code_security` and `secret_protection` are the legacy product values',
});
export const EnforcementValue = Type.Enum(['enforced', 'unenforced']);
export const RunnerType = Type.Enum(['standard', 'labeled', 'not_set']);
export const ReviewerType = Type.Enum(['TEAM', 'ROLE']);
export const ReviewerMode = Type.Enum(['ALWAYS', 'EXEMPT']);
export const TargetType = Type.Enum(['global', 'enterprise', 'organization']);
export const DefaultForNewRepos = Type.Enum(['all', 'none', 'private_and_internal', 'public']);
export const AttachmentStatus = Type.Enum(['attached', 'attaching', 'detached', 'removed', 'enforced', 'failed', 'updating', 'removed_by_enterprise']);

type PlainField = Exclude<EnablementField, 'advanced_security'>;
const plainFields = ENABLEMENT_FIELDS.filter((field): field is PlainField => field !== 'advanced_security');

function enablementProperties<K extends string>(fields: readonly K[]) {
  return Object.fromEntries(fields.map((field) => [field, EnablementValue])) as { [P in K]: typeof EnablementValue };
}

function optionalEnablementProperties<K extends string>(fields: readonly K[]) {
  return Object.fromEntries(fields.map((field) => [field, Type.Optional(EnablementValue)])) as { [P in K]: TOptional<typeof EnablementValue> };
}

// --- Representations -----------------------------------------------------------------------------

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

// --- Request bodies ------------------------------------------------------------------------------

const strict = { additionalProperties: false } as const;

const Name = Type.String({ minLength: 1, maxLength: 255, description: 'The name of the code security configuration; unique within its owner' });
const Description = Type.String({ maxLength: 255, description: 'A description of the code security configuration' });

const commonFields = ENABLEMENT_FIELDS.filter(
  (field): field is Exclude<PlainField, 'updater_delegated_alert_dismissal' | 'secret_scanning_delegated_bypass'> =>
    field !== 'advanced_security' && field !== 'updater_delegated_alert_dismissal' && field !== 'secret_scanning_delegated_bypass',
);

/** The fields both levels set (everything except the organization-only ones). */
const CommonFields = {
  description: Type.Optional(Description),
  advanced_security: Type.Optional(AdvancedSecurityValue),
  ...optionalEnablementProperties(commonFields),
  dependency_graph_autosubmit_action_options: Type.Optional(Type.Object({
    labeled_runners: Type.Optional(Type.Boolean({ description: 'Use runners labeled for dependency submission instead of standard runners' })),
  }, strict)),
  code_scanning_default_setup_options: Type.Optional(Nullable(Type.Object({
    runner_type: Type.Optional(RunnerType),
    runner_label: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: 255, description: 'The label of the runners, when runner_type is labeled' }))),
  }, strict))),
  code_scanning_options: Type.Optional(Nullable(Type.Object({
    allow_advanced: Type.Optional(Nullable(Type.Boolean({ description: 'Allow repositories that use advanced setup' }))),
  }, strict))),
  enforcement: Type.Optional(EnforcementValue),
};

const OrganizationOnlyFields = {
  updater_delegated_alert_dismissal: Type.Optional(EnablementValue),
  secret_scanning_delegated_bypass: Type.Optional(EnablementValue),
  secret_scanning_delegated_bypass_options: Type.Optional(Type.Object({
    reviewers: Type.Optional(Type.Array(Type.Object({
      reviewer_id: Type.Integer({ minimum: 1, description: 'The id of the team or role' }),
      reviewer_type: ReviewerType,
      mode: Type.Optional(ReviewerMode),
    }, strict), { maxItems: 100 })),
  }, strict)),
};

export const EnterpriseCreateBody = Type.Object({ name: Name, ...CommonFields }, strict);
export const EnterpriseUpdateBody = Type.Object({ name: Type.Optional(Name), ...CommonFields }, strict);
export const OrganizationCreateBody = Type.Object({ name: Name, ...CommonFields, ...OrganizationOnlyFields }, strict);
export const OrganizationUpdateBody = Type.Object({ name: Type.Optional(Name), ...CommonFields, ...OrganizationOnlyFields }, strict);

/** Any of the bodies, as the service reads them. */
export type ConfigurationInput = Partial<Static<typeof OrganizationUpdateBody>>;
