// The core writers the operator surface routes to and seed files load through (src/core/<resource>/
// writes.ts), made for one context; a seed's are given its transaction, which their writes join.
import type { Area } from '../core/area.ts';
import { AccountWrites } from '../core/accounts/writes.ts';
import { MembershipWrites } from '../core/accounts/membership-writes.ts';
import { AppWrites, InstallationWrites } from '../core/apps/writes.ts';
import { TokenWrites } from '../core/apps/token-writes.ts';
import { OwnerWrites } from '../core/repositories/owner-writes.ts';
import { RepositoryWrites } from '../core/repositories/writes.ts';
import type { Executor } from '../db/index.ts';
import type { Context } from '../platform/context.ts';

export function coreWriters(ctx: Context, areas: readonly Area[], within?: Executor) {
  return {
    accounts: new AccountWrites(ctx, within),
    memberships: new MembershipWrites(ctx, areas, within),
    repositories: new RepositoryWrites(ctx, areas, within),
    owners: new OwnerWrites(ctx, areas, within),
    tokens: new TokenWrites(ctx, within),
    apps: new AppWrites(ctx, areas, within),
    installations: new InstallationWrites(ctx, within),
  };
}
