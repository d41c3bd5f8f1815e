// Why a user has a thread: the platform's reasons, which of them show participation, and which is
// the most direct when several apply.

export const REASONS = [
  'approval_requested', 'assign', 'author', 'ci_activity', 'comment', 'invitation', 'manual', 'member_feature_requested',
  'mention', 'review_requested', 'security_advisory_credit', 'security_alert', 'state_change', 'subscribed', 'team_mention',
] as const;
export type Reason = (typeof REASONS)[number];

/** Most direct first. */
const PRECEDENCE: readonly Reason[] = ['mention', 'team_mention', 'review_requested', 'assign', 'author', 'comment', 'state_change', 'manual', 'subscribed'];
/** Reasons that show direct participation (the `participating` filter). */
export const PARTICIPATING: readonly Reason[] = ['assign', 'author', 'comment', 'mention', 'review_requested', 'state_change', 'team_mention', 'approval_requested'];
/** Participation that creates a thread subscription. */
export const SUBSCRIBING = new Set<Reason>(['author', 'comment', 'mention', 'assign', 'review_requested', 'state_change']);

const rank = (reason: Reason) => {
  const index = PRECEDENCE.indexOf(reason);
  return index < 0 ? PRECEDENCE.length : index;
};
export const mostDirect = (reasons: readonly Reason[]) => [...reasons].sort((a, b) => rank(a) - rank(b))[0];
