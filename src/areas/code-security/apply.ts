// The background half of attach and update: each repository waiting on a configuration gets the
// configuration's effective settings (free features only when no license covers a private or
// internal repository), then its attachment turns `attached`, `enforced` or `failed`.
import { defineJob } from '../../jobs/job.ts';
import type { Executor } from '../../db/index.ts';
import type { Context } from '../../platform/context.ts';
import type { RepositoryRow } from '../../core/repositories/representations.ts';
import { effectiveSettings, needsLicense, parseSecurityAndAnalysis, usesPaidFeature, type Settings } from './features.ts';
import { organizationEnterpriseId } from '../../core/accounts/store.ts';
import { findRepositoryById } from '../../core/repositories/store.ts';
import * as store from './store.ts';
import { assertRepositoryWritable } from '../../core/access/index.ts';

interface ApplyJob {
  configurationId: number;
}

/** Applies a configuration to the repositories waiting on it. */
export const APPLY = defineJob<ApplyJob, Context>({
  name: 'code-security.apply',
  handle: (ctx, { configurationId }) => applyConfiguration(ctx, configurationId),
  options: () => ({ concurrency: 2 }),
});

/** Queues the apply job of a configuration, inside the caller's transaction so it exists exactly when the attachments do. */
export async function queueApply(ctx: Context, trx: Executor, configurationId: number): Promise<void> {
  await APPLY.send(ctx.queue, { configurationId }, { transaction: trx });
}

const BATCH = 100;

/** Repositories waiting longer than this have lost their job (its retries ran out): the sweep queues it again. */
const STALE_SECONDS = 300;

/** The sweep (src/workers.ts) that queues again the apply jobs of repositories left waiting. */
export async function resumeStaleApplies(ctx: Context): Promise<void> {
  const before = new Date(ctx.clock.nowMs() - STALE_SECONDS * 1000).toISOString();
  for (const configurationId of await store.staleConfigurationIds(ctx.db.kysely, before)) {
    // One resumed job per configuration at a time, however many processes run the sweep.
    await APPLY.send(ctx.queue, { configurationId }, { singletonKey: `resume-${configurationId}` });
  }
}

/** Applies a configuration to every repository waiting on it. Idempotent: a second run finds nothing waiting. */
export async function applyConfiguration(ctx: Context, configurationId: number): Promise<void> {
  let after = 0;
  for (;;) {
    const ids = await store.pendingRepositoryIds(ctx.db.kysely, configurationId, after, BATCH);
    if (!ids.length) return;
    for (const repositoryId of ids) {
      try {
        await ctx.db.kysely.transaction().execute((trx) => applyToRepository(ctx, trx, configurationId, repositoryId));
      } catch (err) {
        // An error on one repository fails its attachment, not the others'.
        ctx.log.error({ err, configurationId, repositoryId }, 'applying a code security configuration failed');
        await store.setAttachmentStatus(ctx.db.kysely, repositoryId, configurationId, 'failed', ctx.clock.now().toISOString());
      }
    }
    after = ids[ids.length - 1]!;
  }
}

async function applyToRepository(ctx: Context, trx: Executor, configurationId: number, repositoryId: number): Promise<void> {
  const postgres = ctx.db.dialect === 'postgres';
  const now = ctx.clock.now().toISOString();
  const attachment = await store.lockAttachment(trx, repositoryId, postgres);
  // Re-attached elsewhere, detached or already applied meanwhile: nothing left for this job.
  if (!attachment || attachment.configuration_id !== configurationId || !(store.PENDING_STATUSES as readonly string[]).includes(attachment.status)) return;
  const configuration = await store.findConfiguration(trx, configurationId);
  const repository = await findRepositoryById(trx, repositoryId);
  if (!configuration || !repository) return;
  try {
    assertRepositoryWritable(repository);
  } catch {
    await store.setAttachmentStatus(trx, repositoryId, configurationId, 'failed', now);
    return;
  }
  const settings = JSON.parse(configuration.settings) as Settings;
  const restricted = repository.visibility !== 'public';
  let seat = restricted ? await store.seatOf(trx, repositoryId) : undefined;
  if (restricted && !seat && needsLicense(settings)) seat = await takeLicense(trx, repository, now, postgres);
  const current = parseSecurityAndAnalysis(repository.security_and_analysis);
  const next = effectiveSettings(current, settings, repository, !restricted || seat !== undefined);
  if (seat && !usesPaidFeature(next)) await store.releaseSeat(trx, repositoryId);
  await store.setRepositorySecurityAndAnalysis(trx, repositoryId, JSON.stringify(next));
  await store.setAttachmentStatus(trx, repositoryId, configurationId, configuration.enforcement === 'enforced' ? 'enforced' : 'attached', now);
}

/**
 * A license for a private or internal repository: from its organization's own licenses first, then
 * from its enterprise's (shared by the enterprise's organizations). None left: no seat.
 */
async function takeLicense(trx: Executor, repository: RepositoryRow, now: string, postgres: boolean) {
  const enterpriseId = await organizationEnterpriseId(trx, repository.owner_id);
  const pools: [store.OwnerType, number][] = [['organization', repository.owner_id]];
  if (enterpriseId !== null) pools.push(['enterprise', enterpriseId]);
  for (const [ownerType, ownerId] of pools) {
    const licenses = await store.licenseCount(trx, ownerType, ownerId, postgres);
    if (licenses > 0 && (await store.seatsUsed(trx, ownerType, ownerId)) < licenses) {
      await store.takeSeat(trx, repository.id, ownerType, ownerId, now);
      return store.seatOf(trx, repository.id);
    }
  }
  return undefined;
}
