// `codehost admin METHOD PATH [JSON]`: a call to a running server's operator surface, with the
// operator lists and the test double by name.
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { ConfigError, type Config } from '../config.ts';
import { HELP } from './help.ts';
import { checkSeedFile, errorCode } from './startup.ts';

/** States of a background operation (a user migration's export) that `--follow` waits out. */
const IN_PROGRESS = ['pending', 'exporting'];

/** The operator lists by name: `users`, `orgs`, `repos`, `apps` (`--page N`, `--per-page N`), `tokens [LOGIN]`. */
const ADMIN_LISTS = ['users', 'orgs', 'repos', 'apps', 'tokens'];

function adminListCall(args: string[]): string[] {
  const [list, ...rest] = args;
  if (!list || !ADMIN_LISTS.includes(list)) return args;
  const query = new URLSearchParams();
  for (let i = 0; i < rest.length; i++) {
    const arg = rest[i]!;
    if (arg === '--page' || arg === '--per-page') query.set(arg === '--page' ? 'page' : 'per_page', rest[++i] ?? '');
    else if (list === 'tokens' && !query.has('login')) query.set('login', arg);
    else throw new ConfigError(`codehost admin ${list}: unexpected "${arg}" (see \`codehost help admin\`)`);
  }
  return ['GET', `/${list}${query.size ? `?${query}` : ''}`];
}

/** The journal's filters as options: `--status 4xx` is `status=4xx`, `--per-page` is `per_page`. */
export const JOURNAL_OPTIONS = ['method', 'path', 'operation', 'login', 'app', 'installation', 'token', 'warning', 'status', 'since', 'per-page', 'page'];

/**
 * The test double by name (docs/testing.md): `reset [empty|demo] [--seed FILE]`, `snapshot
 * save|restore|list|delete NAME`, `requests [count|clear|permissions-used] [--FILTER VALUE]...`.
 */
function testSupportCall(args: string[]): string[] {
  const [command, ...rest] = args;
  const usage = (message: string) => new ConfigError(`codehost admin ${command}: ${message} (see \`codehost help admin\`)`);
  if (command === 'reset') {
    const { values, positionals } = parseArgs({ args: rest, options: { seed: { type: 'string' } }, allowPositionals: true, strict: false });
    if (typeof values.seed === 'string') {
      if (positionals.length) throw usage('--seed FILE replaces empty or demo');
      return ['POST', '/reset', JSON.stringify({ to: 'seed', seed: readFileSync(checkSeedFile(values.seed, '--seed'), 'utf8') })];
    }
    if (positionals.length > 1 || (positionals[0] && !['empty', 'demo'].includes(positionals[0]))) throw usage('reset [empty|demo] or reset --seed FILE');
    return ['POST', '/reset', JSON.stringify({ to: positionals[0] ?? 'empty' })];
  }
  if (command === 'snapshot') {
    const [action, name, extra] = rest;
    if (action === 'list' && name === undefined) return ['GET', '/snapshots'];
    if (!name || extra !== undefined) throw usage('snapshot save|restore|delete NAME, or snapshot list');
    const named = `/snapshots/${encodeURIComponent(name)}`;
    if (action === 'save') return ['POST', '/snapshots', JSON.stringify({ name })];
    if (action === 'restore') return ['POST', `${named}/restore`];
    if (action === 'delete') return ['DELETE', named];
    throw usage(`unknown action "${action}"`);
  }
  if (command === 'requests') {
    const action = rest[0] === 'count' || rest[0] === 'clear' || rest[0] === 'permissions-used' ? rest.shift() : undefined;
    const filter: Record<string, string> = {};
    for (let i = 0; i < rest.length; i++) {
      const option = rest[i]!.replace(/^--/, '');
      if (!rest[i]!.startsWith('--') || !JOURNAL_OPTIONS.includes(option) || rest[i + 1] === undefined) throw usage(`unexpected "${rest[i]}"; filters: ${JOURNAL_OPTIONS.map((o) => `--${o}`).join(' ')}`);
      filter[option.replace('-', '_')] = rest[++i]!;
    }
    if (action === 'clear') return ['DELETE', '/requests'];
    if (action === 'count') return ['POST', '/requests/count', JSON.stringify(filter)];
    if (action === 'permissions-used') return ['GET', `/requests/permissions-used?${new URLSearchParams(filter)}`];
    return ['GET', `/requests?${new URLSearchParams(filter)}`];
  }
  return args;
}

export async function adminCall(config: Config, args: string[]): Promise<void> {
  const follow = args.includes('--follow');
  const [method, path, body] = adminListCall(testSupportCall(args.filter((arg) => arg !== '--follow')));
  if (!method || !path) throw new ConfigError(HELP.admin!);
  if (follow && method.toUpperCase() !== 'GET') throw new ConfigError('--follow repeats a GET');
  const token = process.env.CODEHOST_ADMIN_TOKEN;
  if (!token) throw new ConfigError('CODEHOST_ADMIN_TOKEN must be set to call the admin API (the token the server printed at its first start)');
  const base = (process.env.CODEHOST_URL || `http://127.0.0.1:${config.port}`).replace(/\/+$/, '');
  if (!URL.canParse(base) || !/^https?:$/.test(new URL(base).protocol)) {
    throw new ConfigError(`CODEHOST_URL must be the server's address, like http://127.0.0.1:3000, got "${base}"`);
  }
  const url = `${base}/_admin${path.startsWith('/') ? path : `/${path}`}`;
  let last = '';
  for (;;) {
    const response = await fetch(url, {
      method: method.toUpperCase(),
      headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ?? (method.toUpperCase() === 'POST' ? '{}' : undefined),
    }).catch((error: unknown) => {
      throw new ConfigError(
        `codehost admin: no server answers at ${base} (${errorCode(error) ?? (error as Error).message}); start one with \`bin/codehost.js serve\`, or set CODEHOST_URL to its address`,
        { cause: error },
      );
    });
    const text = await response.text();
    let answer: { state?: string; records_exported?: number } | undefined;
    try {
      answer = text ? JSON.parse(text) : undefined;
    } catch {
      throw new ConfigError(`codehost admin: ${base} answered ${response.status} with something that is not JSON; is CODEHOST_URL a codehost server?`);
    }
    if (follow && response.ok && IN_PROGRESS.includes(answer?.state ?? '')) {
      const line = `state: ${answer!.state}${answer!.records_exported ? `, records: ${answer!.records_exported}` : ''}`;
      if (line !== last) console.log(line);
      last = line;
      await new Promise((resolve) => setTimeout(resolve, 1000));
      continue;
    }
    console.log(answer !== undefined ? JSON.stringify(answer, null, 2) : `${response.status} ${response.statusText}`);
    if (!response.ok || (follow && answer?.state === 'failed')) process.exitCode = 1;
    return;
  }
}
