// The core writers the operator surface routes to and seed files load through (src/core/<resource>/
// writes.ts), made for one context: a seed's is scoped to its transaction.
import type { Area } from '../core/area.ts';
import { AccountWrites } from '../core/accounts/writes.ts';
import { MembershipWrites } from '../core/accounts/membership-writes.ts';
import { AppWrites, InstallationWrites } from '../core/apps/writes.ts';
import { TokenWrites } from '../core/apps/token-writes.ts';
import { RepositoryWrites } from '../core/repositories/writes.ts';
import type { Context } from '../platform/context.ts';

export function coreWriters(ctx: Context, areas: readonly Area[]) {
  return {
    accounts: new AccountWrites(ctx),
    memberships: new MembershipWrites(ctx, areas),
    repositories: new RepositoryWrites(ctx, areas),
    tokens: new TokenWrites(ctx),
    apps: new AppWrites(ctx, areas),
    installations: new InstallationWrites(ctx),
  };
}
