// The operator surface of this area: advanced-security license counts of organizations and
// enterprises (PUT and GET /_admin/orgs/{org}/licenses and /_admin/enterprises/{enterprise}/licenses),
// and the `licenses` seed key.
import { Type, type Static } from 'typebox';
import type { Api, Context } from '../../platform/context.ts';
import { invalidField, notFound } from '../../platform/errors.ts';
import { findAccount, findEnterprise } from '../../core/accounts/store.ts';
import { checkEntries } from '../../platform/seed.ts';
import { CodeSecurityService } from './service.ts';
import type { OwnerType } from './store.ts';

const LicenseCount = Type.Integer({ minimum: 0, maximum: 1_000_000, description: 'Advanced-security licenses: private or internal repositories that may use paid features' });
const LicensesBody = Type.Object({ advanced_security: LicenseCount }, { additionalProperties: false });
const LicensesAnswer = Type.Object({ advanced_security: Type.Integer(), used: Type.Integer() });

export const LicenseSeed = Type.Object({
  org: Type.Optional(Type.String()),
  enterprise: Type.Optional(Type.String()),
  advanced_security: LicenseCount,
}, { additionalProperties: false });

const hidden = { hide: true, tags: ['admin'] } as const;

async function owner(ctx: Context, kind: OwnerType, name: string): Promise<number> {
  if (kind === 'organization') {
    const org = await findAccount(ctx.db.kysely, name);
    if (!org || org.type !== 'Organization') throw notFound(`Organization not found: ${name}`);
    return org.id;
  }
  const enterprise = await findEnterprise(ctx.db.kysely, name);
  if (!enterprise) throw notFound(`Enterprise not found: ${name}`);
  return enterprise.id;
}

export function codeSecurityAdminRoutes(app: Api, ctx: Context): void {
  const service = new CodeSecurityService(ctx);
  const forms: [OwnerType, string][] = [
    ['organization', '/_admin/orgs/:name/licenses'],
    ['enterprise', '/_admin/enterprises/:name/licenses'],
  ];
  for (const [kind, path] of forms) {
    const params = Type.Object({ name: Type.String() });
    app.put(path, {
      schema: { ...hidden, params, body: LicensesBody, response: { 200: LicensesAnswer } },
    }, async (request) => service.setLicenses(kind, await owner(ctx, kind, request.params.name), request.body.advanced_security));
    app.get(path, {
      schema: { ...hidden, params, response: { 200: LicensesAnswer } },
    }, async (request) => service.licenses(kind, await owner(ctx, kind, request.params.name)));
  }
}

/** Seed entries `{org | enterprise, advanced_security}`: setting a count is idempotent. */
export async function seedLicenses(ctx: Context, entries: unknown[]): Promise<void> {
  const service = new CodeSecurityService(ctx);
  const checked: Static<typeof LicenseSeed>[] = checkEntries(LicenseSeed, 'licenses', entries);
  for (const [index, entry] of checked.entries()) {
    if ((entry.org === undefined) === (entry.enterprise === undefined)) {
      throw invalidField('Seed', `licenses[${index}]`, `licenses[${index}]: name exactly one of org or enterprise`);
    }
  }
  for (const entry of checked) {
    const kind: OwnerType = entry.org !== undefined ? 'organization' : 'enterprise';
    await service.setLicenses(kind, await owner(ctx, kind, (entry.org ?? entry.enterprise)!), entry.advanced_security);
  }
}
