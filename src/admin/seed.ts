// Seed files (YAML or JSON): top-level keys mirror the admin API. Loading is idempotent: an entry
// that already exists is left alone. Areas add their own keys (issues, comments, licenses...).
import { readFile } from 'node:fs/promises';
import { Type, type TSchema } from 'typebox';
import { parse } from 'yaml';
import type { Area } from '../core/area.ts';
import type { Context } from '../platform/context.ts';
import { ApiError, invalidField } from '../platform/errors.ts';
import { checkEntries } from '../platform/seed.ts';
import {
  AppBody, AuthorizationBody, CollaboratorSeedBody, EnterpriseBody, InstallationBody, OrgBody, RepoBody, TeamBody, TokenBody, UserBody, WatchBody,
} from './schemas.ts';
import { AdminService } from './service.ts';

export interface SeedReport {
  created: Record<string, number>;
  skipped: Record<string, number>;
  /** One-time secrets of what was created (client secrets, private keys and generated tokens). */
  secrets: { kind: string; name: string; values: Record<string, string> }[];
}

const alreadyThere = (error: unknown) =>
  error instanceof ApiError && error.status === 422 && (error.errors ?? []).some((e) => e.code === 'already_exists');

export async function loadSeedFile(ctx: Context, areas: readonly Area[], path: string): Promise<SeedReport> {
  const text = await readFile(path, 'utf8');
  return loadSeed(ctx, areas, parse(text));
}

export async function loadSeed(ctx: Context, areas: readonly Area[], data: unknown): Promise<SeedReport> {
  if (data === null || typeof data !== 'object' || Array.isArray(data)) throw invalidField('Seed', 'file', 'a seed file is a mapping of keys to lists');
  const seed = data as Record<string, unknown>;
  const service = new AdminService(ctx, areas);
  const report: SeedReport = { created: {}, skipped: {}, secrets: [] };

  // The core keys, in the order their references need.
  const core: [string, TSchema, (value: any) => Promise<unknown>][] = [
    ['users', UserBody, (v) => service.createUser(v)],
    ['enterprises', EnterpriseBody, (v) => service.createEnterprise(v)],
    ['orgs', OrgBody, (v) => service.createOrganization(v)],
    ['repos', RepoBody, (v) => service.createRepository(v)],
    // After repos: a team may name its repositories.
    ['teams', Type.Intersect([Type.Object({ org: Type.String() }), TeamBody]), ({ org, ...team }) => service.createTeam(org, team)],
    ['collaborators', CollaboratorSeedBody, ({ repository, login, permission }) => {
      const [owner, name] = String(repository).split('/');
      return service.setCollaborator(owner!, name!, login, permission);
    }],
    ['watching', Type.Intersect([Type.Object({ repository: Type.String({ pattern: '^[^/]+/[^/]+$' }) }), WatchBody]), ({ repository, ...watch }) => {
      const [owner, name] = String(repository).split('/');
      return service.setWatch(owner!, name!, watch);
    }],
    ['tokens', TokenBody, async (v) => {
      const { token } = await service.createToken(v);
      if (!v.value) report.secrets.push({ kind: 'token', name: `${v.login} (${v.kind})`, values: { token } });
    }],
    ['apps', AppBody, async (v) => {
      const { app, clientSecret, privateKey } = await service.createApp(v);
      const values: Record<string, string> = { client_id: app.client_id, app_id: String(app.id) };
      if (!v.client_secret) values.client_secret = clientSecret;
      if (!v.private_key) values.private_key = privateKey;
      report.secrets.push({ kind: 'app', name: app.slug, values });
    }],
    ['installations', Type.Intersect([Type.Object({ app: Type.String() }), InstallationBody]), ({ app, ...installation }) => service.createInstallation(app, installation)],
    ['authorizations', Type.Intersect([Type.Object({ app: Type.String() }), AuthorizationBody]), async ({ app, ...authorization }) => {
      const { token } = await service.createAuthorization(app, authorization);
      if (!authorization.value) report.secrets.push({ kind: 'authorization', name: `${app} for ${authorization.login}`, values: { token } });
    }],
  ];

  // Check the whole file before creating anything: a bad entry must not leave half a seed behind.
  const known = new Set([...core.map(([key]) => key), ...areas.flatMap((a) => Object.keys(a.seed ?? {}))]);
  for (const [key, list] of Object.entries(seed)) {
    if (!known.has(key)) throw invalidField('Seed', key, `unknown seed key "${key}"`);
    if (!Array.isArray(list)) throw invalidField('Seed', key, `${key} must be a list`);
  }
  const checked = core.map(([key, schema, create]) => [key, checkEntries(schema, key, (seed[key] ?? []) as unknown[]), create] as const);

  for (const [key, entries, create] of checked) {
    for (const value of entries) {
      try {
        await create(value);
        report.created[key] = (report.created[key] ?? 0) + 1;
      } catch (error) {
        if (!alreadyThere(error)) throw error;
        report.skipped[key] = (report.skipped[key] ?? 0) + 1;
      }
    }
  }

  for (const area of areas) {
    for (const [key, load] of Object.entries(area.seed ?? {})) {
      const list = seed[key] as unknown[] | undefined;
      if (list === undefined) continue;
      await load(ctx, list);
      report.created[key] = (report.created[key] ?? 0) + list.length;
    }
  }
  return report;
}
