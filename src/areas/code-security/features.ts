// The features a code security configuration sets, which of them are free, and how a configuration
// becomes a repository's effective settings (its `security_and_analysis`), and the values its fields
// take (the schemas that requests and representations share). Pure rules, no storage.
import { Type } from 'typebox';

export type Enablement = 'enabled' | 'disabled' | 'not_set';
/** `advanced_security` also takes the legacy product values. */
export type AdvancedSecurity = Enablement | 'code_security' | 'secret_protection';

/** Every enablement field of a configuration, in the spec's order. */
export const ENABLEMENT_FIELDS = [
  'advanced_security',
  'code_security',
  'dependency_graph',
  'dependency_graph_autosubmit_action',
  'updater_alerts',
  'updater_security_updates',
  'updater_delegated_alert_dismissal',
  'code_scanning_default_setup',
  'code_scanning_delegated_alert_dismissal',
  'secret_protection',
  'secret_scanning',
  'secret_scanning_push_protection',
  'secret_scanning_delegated_bypass',
  'secret_scanning_validity_checks',
  'secret_scanning_non_provider_patterns',
  'secret_scanning_generic_secrets',
  'secret_scanning_delegated_alert_dismissal',
  'secret_scanning_extended_metadata',
  'private_vulnerability_reporting',
] as const;
export type EnablementField = (typeof ENABLEMENT_FIELDS)[number];

/**
 * Features every repository gets without an advanced-security license. The others (the advanced
 * security products, code scanning and secret scanning) are free on public repositories only; a
 * private or internal repository needs a license for them.
 */
export const FREE_FEATURES: ReadonlySet<EnablementField> = new Set([
  'dependency_graph',
  'dependency_graph_autosubmit_action',
  'updater_alerts',
  'updater_security_updates',
  'updater_delegated_alert_dismissal',
  'private_vulnerability_reporting',
]);

export interface BypassReviewer {
  reviewer_id: number;
  reviewer_type: 'TEAM' | 'ROLE';
  mode: 'ALWAYS' | 'EXEMPT';
}

export interface DefaultSetupOptions {
  runner_type: 'standard' | 'labeled' | 'not_set';
  runner_label: string | null;
}

/** What a configuration stores besides its name, description and enforcement. */
export type Settings = Record<Exclude<EnablementField, 'advanced_security'>, Enablement> & {
  advanced_security: AdvancedSecurity;
  dependency_graph_autosubmit_action_options: { labeled_runners: boolean };
  code_scanning_default_setup_options: DefaultSetupOptions | null;
  code_scanning_options: { allow_advanced: boolean | null } | null;
  secret_scanning_delegated_bypass_options: { reviewers: BypassReviewer[] };
};

export type Enforcement = 'enforced' | 'unenforced';

/**
 * Create defaults (decisions.md): every enablement field `disabled` except `dependency_graph`; the
 * default setup's runners `not_set`, as the platform answers a new configuration (the built-in
 * global configuration's options are null instead).
 */
export function defaultSettings(): Settings {
  const fields = Object.fromEntries(ENABLEMENT_FIELDS.map((field) => [field, 'disabled'])) as Record<EnablementField, Enablement>;
  return {
    ...fields,
    dependency_graph: 'enabled',
    dependency_graph_autosubmit_action_options: { labeled_runners: false },
    code_scanning_default_setup_options: { runner_type: 'not_set', runner_label: null },
    code_scanning_options: null,
    secret_scanning_delegated_bypass_options: { reviewers: [] },
  };
}

/** The product an `advanced_security` value turns on, for the effective `advanced_security` status. */
const advancedSecurityOn = (value: AdvancedSecurity) => value === 'enabled' || value === 'code_security' || value === 'secret_protection';

/** Whether a feature needs a license on a private or internal repository. */
const isPaid = (field: EnablementField) => !FREE_FEATURES.has(field);

/** The configuration's value of a field as an on/off/leave decision. */
function requested(settings: Settings, field: EnablementField): Enablement {
  if (field === 'advanced_security') {
    const value = settings.advanced_security;
    return value === 'not_set' ? 'not_set' : advancedSecurityOn(value) ? 'enabled' : 'disabled';
  }
  return settings[field];
}

/** Whether applying the configuration to a private or internal repository would turn on a paid feature. */
export function needsLicense(settings: Settings): boolean {
  return ENABLEMENT_FIELDS.some((field) => isPaid(field) && requested(settings, field) === 'enabled');
}

export type SecurityAndAnalysis = Record<string, 'enabled' | 'disabled'>;

/**
 * A repository's effective settings once a configuration is applied: `enabled` and `disabled` set the
 * feature, `not_set` leaves what the repository has. Without `licensed`, a private or internal
 * repository gets the free features only (paid ones the configuration enables stay off).
 */
export function effectiveSettings(current: SecurityAndAnalysis, settings: Settings, repository: { visibility: string }, licensed: boolean): SecurityAndAnalysis {
  const free = repository.visibility === 'public' || licensed;
  const next: SecurityAndAnalysis = { ...current };
  for (const field of ENABLEMENT_FIELDS) {
    const value = requested(settings, field);
    if (value === 'not_set') continue;
    next[field] = value === 'enabled' && (free || !isPaid(field)) ? 'enabled' : 'disabled';
  }
  return next;
}

/** Whether effective settings hold a paid feature (so a private or internal repository keeps a license seat). */
export function usesPaidFeature(state: SecurityAndAnalysis): boolean {
  return ENABLEMENT_FIELDS.some((field) => isPaid(field) && state[field] === 'enabled');
}

/** The settings with every paid feature off: what a private or internal repository keeps once its license goes. */
export function withoutPaidFeatures(state: SecurityAndAnalysis): SecurityAndAnalysis {
  const paid = new Set<string>(ENABLEMENT_FIELDS.filter(isPaid));
  return Object.fromEntries(Object.entries(state).map(([field, value]) => [field, paid.has(field) ? 'disabled' : value])) as SecurityAndAnalysis;
}

export function parseSecurityAndAnalysis(text: string): SecurityAndAnalysis {
  const parsed = JSON.parse(text) as Record<string, unknown>;
  return Object.fromEntries(Object.entries(parsed).filter(([, v]) => v === 'enabled' || v === 'disabled')) as SecurityAndAnalysis;
}

// --- The values of the fields, as schemas (requests and representations) ------------------------

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
