// The CLI: `codehost serve | migrate | seed FILE | admin METHOD PATH [JSON] | admin-token reset|generate
// | secret-key generate|rotate | token generate --kind KIND | replay FILE|--app SLUG --to URL`, each command in its file of src/cli/.
// Settings come from the environment (and a `.env` file); every one is checked before anything is
// touched, and a failure is one line that names the setting or the cause and what to do (the stack
// only at CODEHOST_LOG_LEVEL=debug).
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { adminCall, JOURNAL_OPTIONS } from './cli/admin.ts';
import { resetAdminTokenCommand } from './cli/admin-token.ts';
import { backupCommand } from './cli/backup.ts';
import { generate } from './cli/generate.ts';
import { HELP } from './cli/help.ts';
import { migrate } from './cli/migrate.ts';
import { REPLAY_OPTIONS, replayCommand } from './cli/replay.ts';
import { rotateKey } from './cli/secret-key.ts';
import { seed } from './cli/seed.ts';
import { serve } from './cli/serve.ts';
import { debugging } from './cli/startup.ts';
import { ConfigError, loadConfig, readDotEnv, unknownSettings } from './config.ts';
import { ApiError } from './platform/errors.ts';

const VERSION = (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }).version;

/**
 * The options each command knows (besides --help): any other argument that starts with `-` is
 * refused before anything is read or touched, so that a mistyped or imagined option
 * (`migrate --chek`) never runs the command without it.
 */
const OPTIONS: Record<string, string[]> = {
  serve: ['--seed'],
  migrate: ['--check'],
  seed: [],
  admin: ['--follow', '--page', '--per-page', '--seed', ...JOURNAL_OPTIONS.map((option) => `--${option}`)],
  backup: [],
  replay: REPLAY_OPTIONS,
  'admin-token': [],
  'secret-key': [],
  token: ['--kind'],
  help: [],
  '--version': [],
};

function refuseUnknownOptions(command: string, args: string[]): void {
  const known = OPTIONS[command] ?? [];
  for (const arg of args) {
    if (!arg.startsWith('-') || arg === '-') continue;
    const name = arg.split('=')[0]!;
    if (known.includes(name)) continue;
    const which = known.length ? `its options: ${known.join(' ')}` : 'it takes none';
    const own = command !== '--version' && command !== 'help';
    throw new ConfigError(`${command === '--version' ? 'codehost --version' : command}: unknown option ${name} (${which}); see \`codehost help${own ? ` ${command}` : ''}\``);
  }
}

export async function main(argv: string[]): Promise<void> {
  const [command, ...rest] = argv;
  if (command === '--version' || command === '-v') {
    refuseUnknownOptions('--version', rest);
    console.log(`codehost ${VERSION}`);
    return;
  }
  if (!command || command === '--help' || command === '-h' || (command === 'help' && !rest.length)) {
    console.log(HELP.main);
    return;
  }
  if (command === 'help') {
    refuseUnknownOptions('help', rest);
    const topic = rest[0]!;
    if (!(topic in HELP) || topic === 'main') throw new ConfigError(`unknown command "${topic}"\n\n${HELP.main}`);
    console.log(HELP[topic]);
    return;
  }
  if (!(command in HELP) || command === 'main') throw new ConfigError(`unknown command "${command}"\n\n${HELP.main}`);
  if (rest.includes('--help') || rest.includes('-h')) {
    console.log(HELP[command]);
    return;
  }
  refuseUnknownOptions(command, rest);
  if (command === 'token' || (command === 'secret-key' && rest[0] !== 'rotate') || (command === 'admin-token' && rest[0] === 'generate')) {
    const [action, ...args] = rest;
    if (action !== 'generate' || (command !== 'token' && args.length)) {
      const actions = command === 'secret-key' ? '`codehost secret-key generate` or `codehost secret-key rotate`' : `\`codehost ${command} generate${command === 'token' ? ' --kind KIND' : ''}\``;
      throw new ConfigError(`${command}: the action is ${actions} (see \`codehost help ${command}\`)`);
    }
    return generate(command, args);
  }
  // Settings nobody reads and .env lines that set nothing are said, not ignored silently (a
  // production server's start refuses the settings: refusals).
  for (const warning of readDotEnv(process.cwd())) console.error(warning);
  const config = loadConfig();
  if (command !== 'serve' || config.mode !== 'production') for (const warning of unknownSettings()) console.error(warning);
  switch (command) {
    case 'serve': {
      let seedFile: string | undefined;
      try {
        seedFile = parseArgs({ args: rest, options: { seed: { type: 'string' } } }).values.seed;
      } catch (error) {
        throw new ConfigError(`serve: ${(error as Error).message}; see \`codehost help serve\``);
      }
      return serve(config, seedFile);
    }
    case 'migrate':
      return migrate(config, { check: rest.includes('--check') });
    case 'seed':
      return seed(config, rest);
    case 'admin':
      return adminCall(config, rest);
    case 'backup':
      return backupCommand(config, rest);
    case 'replay':
      return replayCommand(config, rest);
    case 'secret-key': {
      if (rest.length > 1) throw new ConfigError('secret-key rotate: it takes no arguments; the new key is CODEHOST_NEW_SECRET_KEY (see `codehost help secret-key`)');
      return rotateKey(config);
    }
    case 'admin-token':
      return resetAdminTokenCommand(config, rest);
  }
}

function describeError(error: unknown): string {
  if (error instanceof ConfigError) return error.message;
  if (error instanceof ApiError) {
    const details = error.errors?.map((e) => e.message ?? `${e.resource} ${e.field}: ${e.code}`).join('; ');
    return `error: ${error.message}${details ? `: ${details}` : ''}`;
  }
  const message = error instanceof Error ? error.message : String(error);
  return `error: ${message}${debugging() ? '' : ' (CODEHOST_LOG_LEVEL=debug shows where)'}`;
}

/** Runs the CLI; a failure is one line on stderr (the stack too at debug) and exit status 1. */
export function run(argv: string[]): void {
  main(argv).catch((error: unknown) => {
    console.error(describeError(error));
    if (debugging()) {
      for (let e = error as { stack?: string; cause?: unknown } | undefined; e; e = e.cause as typeof e) {
        if (e.stack) console.error(e === error ? e.stack : `caused by: ${e.stack}`);
      }
    }
    process.exit(1);
  });
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) run(process.argv.slice(2));
