// `codehost replay FILE --to URL [--secret S]` and `codehost replay --app SLUG --since TIME --to URL`:
// posts each delivery of a fixtures file (or a live app's, from the admin API) in order to a loopback
// receiver, re-signed with the secret given; one line per post, exit status 1 unless every answer was 2xx.
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import type { Fixture } from '../app.ts';
import { ConfigError, type Config } from '../config.ts';
import { errorCode } from './startup.ts';

export const REPLAY_OPTIONS = ['--to', '--secret', '--server', '--app', '--since'];

const usage = (message: string) => new ConfigError(`codehost replay: ${message} (see \`codehost help replay\`)`);

/** The fixtures of a file's text: `{ fixtures: [...] }` as exported, or the list alone. */
export function readFixtures(text: string, where: string): Fixture[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw usage(`${where} is not JSON (${(error as Error).message})`);
  }
  const list = Array.isArray(parsed) ? parsed : (parsed as { fixtures?: unknown } | null)?.fixtures;
  if (!Array.isArray(list)) throw usage(`${where} has no "fixtures" list (export one with GET /_admin/apps/SLUG/deliveries/fixtures)`);
  list.forEach((fixture: Partial<Fixture> | null, i) => {
    const headers = fixture?.headers;
    const strings = headers !== null && typeof headers === 'object' && !Array.isArray(headers) && Object.values(headers).every((value) => typeof value === 'string');
    if (!strings || typeof fixture?.body !== 'string') throw usage(`${where}: fixtures[${i}] needs "headers" (an object of strings) and "body" (a string)`);
  });
  return list as Fixture[];
}

/** A live app's fixtures since a time, from the admin API of the server at `base`. */
async function liveFixtures(base: string, app: string, since: string | undefined): Promise<Fixture[]> {
  const token = process.env.CODEHOST_ADMIN_TOKEN;
  if (!token) throw new ConfigError('CODEHOST_ADMIN_TOKEN must be set to read an app\'s deliveries (the token the server printed at its first start)');
  const url = `${base}/_admin/apps/${encodeURIComponent(app)}/deliveries/fixtures${since === undefined ? '' : `?${new URLSearchParams({ since })}`}`;
  const response = await fetch(url, { headers: { authorization: `Bearer ${token}` } }).catch((error: unknown) => {
    throw new ConfigError(`codehost replay: no server answers at ${base} (${errorCode(error) ?? (error as Error).message}); give its address with --server`, { cause: error });
  });
  const text = await response.text();
  if (!response.ok) {
    let message = text.slice(0, 200);
    try {
      const body = JSON.parse(text) as { message?: string; errors?: { message?: string }[] };
      message = [body.message, ...(body.errors ?? []).map((e) => e.message)].filter(Boolean).join(': ');
    } catch {
      // Not JSON: its first characters say enough.
    }
    throw new ConfigError(`codehost replay: ${base} answered ${response.status} for app ${app}: ${message}`);
  }
  return readFixtures(text, url);
}

export async function replayCommand(config: Config, args: string[]): Promise<void> {
  let values: Record<string, string | boolean | undefined>;
  let positionals: string[];
  try {
    ({ values, positionals } = parseArgs({
      args,
      options: { to: { type: 'string' }, secret: { type: 'string' }, server: { type: 'string' }, app: { type: 'string' }, since: { type: 'string' } },
      allowPositionals: true,
    }));
  } catch (error) {
    throw usage((error as Error).message);
  }
  const { to, secret, server, app, since } = values as Record<string, string | undefined>;
  const [file, extra] = positionals;
  if (!to) throw usage('--to URL (a loopback receiver) is required');
  if (extra !== undefined) throw usage(`one file at a time, got "${extra}" too`);
  if ((file === undefined) === (app === undefined)) throw usage('give a fixtures FILE, or --app SLUG (with --since TIME) for a live app\'s deliveries');
  if (file !== undefined && (server !== undefined || since !== undefined)) throw usage('--server and --since go with --app, not with a FILE');
  if (secret === '') throw usage('--secret must not be empty');
  const { refusedReceiver, replayFixtures } = await import('../app.ts');
  const refused = await refusedReceiver(to);
  if (refused) throw new ConfigError(`codehost replay: ${refused}`);

  let fixtures: Fixture[];
  if (file !== undefined) {
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch (error) {
      throw usage(`cannot read ${file} (${errorCode(error) ?? (error as Error).message})`);
    }
    fixtures = readFixtures(text, file);
  } else {
    const base = (server ?? process.env.CODEHOST_URL ?? `http://127.0.0.1:${config.port}`).replace(/\/+$/, '');
    if (!URL.canParse(base) || !/^https?:$/.test(new URL(base).protocol)) throw usage(`--server must be the server's address, like http://127.0.0.1:3000, got "${base}"`);
    fixtures = await liveFixtures(base, app!, since);
  }

  const outcomes = await replayFixtures(fixtures, { to, secret }, ({ fixture, status, statusCode }) => {
    const event = fixture.action ? `${fixture.event}.${fixture.action}` : fixture.event;
    console.log(`${statusCode || '---'} ${event} ${fixture.guid} ${status}`);
  });
  const failed = outcomes.filter((outcome) => outcome.statusCode < 200 || outcome.statusCode >= 300).length;
  if (outcomes.length === 0) console.log('nothing to replay: no deliveries');
  if (failed > 0) {
    console.error(`codehost replay: ${failed} of ${outcomes.length} posts were not answered 2xx`);
    process.exitCode = 1;
  }
}
