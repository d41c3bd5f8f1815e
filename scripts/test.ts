// `npm test`: the typecheck, then the whole suite on SQLite, then, when DATABASE_URL is set, the same
// suite on PostgreSQL (each test file creates its own database there and drops it).
// Extra arguments are test file paths: `npm test -- test/areas/app-tokens/app-tokens.test.ts`.
import { spawnSync } from 'node:child_process';

const files = process.argv.slice(2);
const patterns = files.length ? files : ['src/**/*.test.ts', 'test/**/*.test.ts'];

function run(label: string, command: string, args: string[], env: NodeJS.ProcessEnv): void {
  console.log(`\n=== ${label}`);
  const result = spawnSync(command, args, { stdio: 'inherit', env });
  if (result.status !== 0) {
    console.error(`\n${label}: failed (exit ${result.status ?? result.signal})`);
    process.exit(result.status || 1);
  }
}

const node = process.execPath;
const testArgs = ['--test', '--test-concurrency=2', '--test-timeout=120000', ...patterns];
const { DATABASE_URL, ...withoutDatabase } = process.env;

if (!files.length) run('typecheck (tsc --noEmit)', node, ['node_modules/typescript/bin/tsc', '--noEmit'], process.env);
if (process.env.CODEHOST_TEST_ONLY !== 'postgres') run('tests on SQLite', node, testArgs, withoutDatabase);
if (DATABASE_URL && process.env.CODEHOST_TEST_ONLY !== 'sqlite') run('tests on PostgreSQL', node, testArgs, process.env);
else if (!DATABASE_URL) console.log('\nDATABASE_URL is not set: the PostgreSQL run is skipped.');
