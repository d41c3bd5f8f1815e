// Every CODEHOST_* setting, parsed, checked and typed in one place, before anything is touched.
// This file is where process.env (and .env) is read; the files of src/config/ take the environment
// as an argument: the settings read (settings.ts, which the README's configuration table mirrors),
// how each kind is parsed (parse.ts) and what production mode refuses (refusals.ts).
import { accessSync, constants, existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { parseEnv } from 'node:util';
import { readSettings, unknownNames } from './config/settings.ts';
import { ConfigError, type Config, type Env } from './config/types.ts';

export { LOG_LEVELS, LOOPBACK_NETWORKS, listeningAddress, MODES, PRIVATE_NETWORKS, publicUrls } from './config/parse.ts';
export { refusals, secretKeyWeakness } from './config/refusals.ts';
export { ConfigError, type Config } from './config/types.ts';

export function loadConfig(env: Env = process.env): Config {
  return readSettings(env);
}

/**
 * The data directory must be a directory this process can write, or be creatable: checked before
 * the database is opened, so a wrong setting leaves nothing behind.
 */
export function checkDataDir(config: Config): void {
  let path = config.dataDir;
  // The nearest part of the path that exists decides.
  while (!existsSync(path) && dirname(path) !== path) path = dirname(path);
  const missing = path !== config.dataDir;
  if (!statSync(path).isDirectory()) {
    throw new ConfigError(`CODEHOST_DATA_DIR: ${path} is not a directory; set CODEHOST_DATA_DIR to a directory (it is created if missing)`);
  }
  try {
    accessSync(path, constants.W_OK | constants.X_OK);
  } catch (error) {
    const readOnly = (error as NodeJS.ErrnoException).code === 'EROFS' ? ' (a read-only file system)' : '';
    throw new ConfigError(
      `CODEHOST_DATA_DIR: ${missing ? `${config.dataDir} cannot be created: ${path}` : config.dataDir} is not writable${readOnly}; ` +
        'set CODEHOST_DATA_DIR to a directory this user can write',
    );
  }
}

/**
 * Reads `.env` in `dir`, if there is one, into `env`: the variables it sets that `env` does not
 * already have (real environment variables win).
 */
export function readDotEnv(dir: string, env: Env = process.env): string[] {
  const file = join(dir, '.env');
  if (!existsSync(file)) return [];
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new ConfigError(`.env: cannot read ${file} (${(error as NodeJS.ErrnoException).code ?? String(error)}); fix or remove the file`);
  }
  for (const [key, value] of Object.entries(parseEnv(text))) {
    if (!(key in env)) env[key] = value;
  }
  // Only the line's leading name is shown: the rest may be a secret written the wrong way.
  return dotEnvJunk(text).map(({ line, text: junk }) => {
    const name = /^(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)/.exec(junk)?.[1];
    return `warning: .env line ${line}${name ? ` (${name}…)` : ''} is not NAME=value, a # comment or blank, and is ignored`;
  });
}

/**
 * The lines of a .env file that are not \`NAME=value\` (optionally \`export NAME=value\`), a \`#\`
 * comment or blank; the lines inside a quoted value that spans lines are part of it.
 */
function dotEnvJunk(text: string): { line: number; text: string }[] {
  const junk: { line: number; text: string }[] = [];
  let quote: string | null = null;
  text.split(/\r?\n/).forEach((line, index) => {
    if (quote) {
      if (line.includes(quote)) quote = null;
      return;
    }
    if (/^\s*(#|$)/.test(line)) return;
    const assignment = /^\s*(?:export\s+)?[A-Za-z_][A-Za-z0-9_.-]*\s*=\s*(.*)$/.exec(line);
    if (!assignment) {
      junk.push({ line: index + 1, text: line.trim() });
      return;
    }
    const value = assignment[1]!;
    const opening = /^["'`]/.exec(value)?.[0];
    if (opening && !value.slice(1).includes(opening)) quote = opening;
  });
  return junk;
}

/**
 * One warning line for each CODEHOST_* variable in `env` that no setting reads, naming the nearest
 * known one (a production server's start refuses them instead: `refusals`).
 */
export function unknownSettings(env: Env = process.env): string[] {
  return unknownNames(env).map(({ name, nearest }) => `warning: ${name} is not a codehost setting and is ignored; the nearest one is ${nearest} (the README lists them all)`);
}
