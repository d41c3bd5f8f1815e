// Seed files (YAML or JSON): top-level keys mirror the admin API. Loading is idempotent: an entry
// that already exists is left alone. Areas add their own keys (issues, comments, licenses...).
// A file loads in one transaction: an entry that fails leaves nothing of the file behind, and the
// error names the entry (`repos[3] (acme/widgets): User not found: nobody`).
import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Kysely, Transaction } from 'kysely';
import { Type, type TSchema } from 'typebox';
import { parse } from 'yaml';
import type { Database } from '../db/schema.ts';
import { withSavepoint } from '../db/savepoint.ts';
import type { Area } from '../core/area.ts';
import type { Context } from '../platform/context.ts';
import { ApiError, invalidField } from '../platform/errors.ts';
import { checkEntries } from '../platform/seed.ts';
import {
  AppBody, AuthorizationBody, CollaboratorSeedBody, EnterpriseBody, InstallationBody, OrgBody, RepoBody, TeamBody, TokenBody, UserBody, WatchBody,
} from './schemas.ts';
import { coreWriters } from './writers.ts';

export interface SeedReport {
  created: Record<string, number>;
  skipped: Record<string, number>;
  /** One-time secrets of what was created (client secrets, private keys and generated tokens). */
  secrets: { kind: string; name: string; values: Record<string, string> }[];
}

/** The core keys, in the order their references need (an area's keys come after them). */
const CORE_KEYS = ['users', 'enterprises', 'orgs', 'repos', 'teams', 'collaborators', 'watching', 'tokens', 'apps', 'installations', 'authorizations'];

const alreadyThere = (error: unknown) =>
  error instanceof ApiError && error.status === 422 && (error.errors ?? []).some((e) => e.code === 'already_exists');

/**
 * A seed file's text as data: JSON when it opens with `{` or `[` (its errors reported as JSON's),
 * YAML otherwise. A syntax error names the file and where.
 */
export function parseSeedText(text: string, file = 'the seed file'): unknown {
  const json = /^\s*[{[]/.test(text);
  try {
    return json ? JSON.parse(text) : parse(text);
  } catch (error) {
    const reason = (error as Error).message.split('\n')[0];
    throw invalidField('Seed', 'file', `${file} is not valid ${json ? 'JSON' : 'YAML'}: ${reason}`);
  }
}

export async function readSeedFile(path: string): Promise<unknown> {
  return parseSeedText(await readFile(path, 'utf8'), path);
}

export async function loadSeedFile(ctx: Context, areas: readonly Area[], path: string): Promise<SeedReport> {
  return loadSeed(ctx, areas, await readSeedFile(path));
}

/** What names an entry in an error: `acme/widgets`, `mona`, `acme/widgets mona`, `my-app on acme`... */
function entryName(entry: unknown): string | undefined {
  if (entry === null || typeof entry !== 'object') return undefined;
  const e = entry as Record<string, unknown>;
  const text = (key: string) => (typeof e[key] === 'string' || typeof e[key] === 'number' ? String(e[key]) : undefined);
  if (text('owner') && text('name')) return `${text('owner')}/${text('name')}`;
  const parent = text('repository') ?? text('org') ?? text('app');
  const own = text('number') !== undefined ? `#${text('number')}` : (text('slug') ?? text('login') ?? text('account') ?? text('name') ?? text('title'));
  if (parent && own) return own.startsWith('#') ? `${parent}${own}` : `${parent} ${own}`;
  return parent ?? own;
}

/** The error of one entry, named by its section, index and key: `repos[3] (acme/widgets): User not found: nobody`. */
function entryError(key: string, index: number, entry: unknown, error: unknown): unknown {
  if (!(error instanceof ApiError)) return error;
  const name = entryName(entry);
  const details = (error.errors ?? []).map((e) => e.message).filter((m): m is string => !!m);
  // An area's own check names the entry `key[0]` (it is given one entry at a time).
  const reason = (details.length ? details.join('; ') : error.message).replaceAll(`${key}[0]`, `${key}[${index}]`).replace(`${key}[${index}]: `, '');
  const where = `${key}[${index}]${name ? ` (${name})` : ''}`;
  // The entry's own status stays (404 for a missing reference, 422 for a bad value).
  return new ApiError(error.status, `${where}: ${reason}; nothing of the seed was loaded`);
}

/** Runs one entry; an entry that already exists is rolled back to where it started and skipped. */
async function entry(trx: Kysely<Database>, create: () => Promise<unknown>): Promise<'created' | 'skipped'> {
  try {
    await withSavepoint(trx, 'seed_entry', create);
    return 'created';
  } catch (error) {
    if (!alreadyThere(error)) throw error;
    return 'skipped';
  }
}

/**
 * Loads seed files (already parsed) in one transaction: all of them, or nothing of any. `first` runs
 * at the start of that transaction (a reset empties the world there: emptied and seeded, or neither).
 */
export async function loadSeeds(ctx: Context, areas: readonly Area[], files: readonly unknown[], first?: (trx: Kysely<Database>) => Promise<void>): Promise<SeedReport[]> {
  const gitPaths: string[] = [];
  try {
    return await ctx.db.kysely.transaction().execute(async (trx) => {
      await first?.(trx);
      // Every read of the seed sees its own writes (SQLite has one connection: a read outside the
      // transaction would wait for it); the writers and the areas' loaders are given it, and join it.
      const scoped: Context = { ...ctx, db: { ...ctx.db, kysely: trx } };
      const reports: SeedReport[] = [];
      for (const data of files) reports.push(await loadInto(scoped, areas, data, gitPaths, trx));
      return reports;
    });
  } catch (error) {
    // The rows are rolled back; the git data made for them goes too.
    await Promise.all(gitPaths.map((path) => rm(join(ctx.config.dataDir, path), { recursive: true, force: true })));
    throw error;
  }
}

export async function loadSeed(ctx: Context, areas: readonly Area[], data: unknown, first?: (trx: Kysely<Database>) => Promise<void>): Promise<SeedReport> {
  const [report] = await loadSeeds(ctx, areas, [data], first);
  return report!;
}

/** The shape of a seed file (known keys, each a list), checked before anything is created. */
export function checkSeed(areas: readonly Area[], data: unknown): void {
  if (data === null || typeof data !== 'object' || Array.isArray(data)) throw invalidField('Seed', 'file', 'a seed file is a mapping of keys to lists');
  const known = new Set([...CORE_KEYS, ...areas.flatMap((a) => Object.keys(a.seed ?? {}))]);
  for (const [key, list] of Object.entries(data)) {
    if (!known.has(key)) throw invalidField('Seed', key, `unknown seed key "${key}"`);
    if (!Array.isArray(list)) throw invalidField('Seed', key, `${key} must be a list`);
  }
}

async function loadInto(ctx: Context, areas: readonly Area[], data: unknown, gitPaths: string[], trx: Transaction<Database>): Promise<SeedReport> {
  checkSeed(areas, data);
  const seed = data as Record<string, unknown>;
  const { accounts, owners, repositories, tokens, apps, installations } = coreWriters(ctx, areas, trx);
  const report: SeedReport = { created: {}, skipped: {}, secrets: [] };

  // The core keys (CORE_KEYS), in the order their references need.
  const core: [string, TSchema, (value: any) => Promise<unknown>][] = [
    ['users', UserBody, (v) => accounts.createUser(v)],
    ['enterprises', EnterpriseBody, (v) => accounts.createEnterprise(v)],
    ['orgs', OrgBody, (v) => accounts.createOrganization(v)],
    ['repos', RepoBody, async (v) => {
      const repository = await repositories.createRepository(v);
      if (repository.git_path) gitPaths.push(repository.git_path);
    }],
    // After repos: a team may name its repositories.
    ['teams', Type.Object({ org: Type.String(), ...TeamBody.properties }), ({ org, ...team }) => owners.createTeam(org, team)],
    ['collaborators', CollaboratorSeedBody, ({ repository, login, permission }) => {
      const [owner, name] = String(repository).split('/');
      return repositories.setCollaborator(owner!, name!, login, permission);
    }],
    ['watching', Type.Object({ repository: Type.String({ pattern: '^[^/]+/[^/]+$' }), ...WatchBody.properties }), ({ repository, ...watch }) => {
      const [owner, name] = String(repository).split('/');
      return repositories.setWatch(owner!, name!, watch);
    }],
    ['tokens', TokenBody, async (v) => {
      const { token } = await tokens.createToken(v);
      if (!v.value) report.secrets.push({ kind: 'token', name: `${v.login} (${v.kind})`, values: { token } });
    }],
    ['apps', AppBody, async (v) => {
      const { app, clientSecret, privateKey } = await apps.createApp(v);
      const values: Record<string, string> = { client_id: app.client_id, app_id: String(app.id) };
      if (!v.client_secret) values.client_secret = clientSecret;
      if (!v.private_key) values.private_key = privateKey;
      report.secrets.push({ kind: 'app', name: app.slug, values });
    }],
    ['installations', Type.Object({ app: Type.String(), ...InstallationBody.properties }), ({ app, ...installation }) => installations.createInstallation(app, installation)],
    ['authorizations', Type.Object({ app: Type.String(), ...AuthorizationBody.properties }), async ({ app, ...authorization }) => {
      const { token } = await apps.createAuthorization(app, authorization);
      if (!authorization.value) report.secrets.push({ kind: 'authorization', name: `${app} for ${authorization.login}`, values: { token } });
    }],
  ];

  // Every core entry is checked against its schema before anything is created.
  const checked = core.map(([key, schema, create]) => [key, checkEntries(schema, key, (seed[key] ?? []) as unknown[]), create] as const);
  const count = (key: string, outcome: 'created' | 'skipped') => (report[outcome][key] = (report[outcome][key] ?? 0) + 1);

  for (const [key, entries, create] of checked) {
    for (const [index, value] of entries.entries()) {
      count(key, await entry(trx, () => create(value)).catch((error: unknown) => {
        throw entryError(key, index, (seed[key] as unknown[])[index], error);
      }));
    }
  }

  // The areas' keys, an entry at a time, so that an error names its entry.
  for (const area of areas) {
    for (const [key, load] of Object.entries(area.seed ?? {})) {
      const list = seed[key] as unknown[] | undefined;
      for (const [index, value] of (list ?? []).entries()) {
        await entry(trx, () => load(ctx, [value], trx)).catch((error: unknown) => {
          throw entryError(key, index, value, error);
        });
        count(key, 'created');
      }
    }
  }
  return report;
}
