// The request bodies of the configuration operations, each shared by the enterprise and the
// organization form (routes.ts), and the input the service reads from them. Response shapes are in
// representations.ts.
import { Type, type Static, type TOptional, type TSchema } from 'typebox';
import { AdvancedSecurityValue, EnablementValue, ENABLEMENT_FIELDS, EnforcementValue, ReviewerMode, ReviewerType, RunnerType, type EnablementField } from './features.ts';

const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

type PlainField = Exclude<EnablementField, 'advanced_security'>;

function optionalEnablementProperties<K extends string>(fields: readonly K[]) {
  return Object.fromEntries(fields.map((field) => [field, Type.Optional(EnablementValue)])) as { [P in K]: TOptional<typeof EnablementValue> };
}

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
