// `npm run bench`: every benchmark, each reported beside the baseline it measured in the same run.
// BENCH_ONLY=app-tokens,notifications picks some; BENCH_SECONDS sets the load duration;
// BENCH_DATABASE=postgres runs the servers on DATABASE_URL instead of the embedded SQLite.
import { readdirSync } from 'node:fs';

const only = process.env.BENCH_ONLY?.split(',').map((s) => s.trim()).filter(Boolean);
const seconds = Number(process.env.BENCH_SECONDS ?? 10);
const env: Record<string, string> = process.env.BENCH_DATABASE === 'postgres' && process.env.DATABASE_URL ? { DATABASE_URL: process.env.DATABASE_URL } : {};

const names = readdirSync(new URL('.', import.meta.url))
  .filter((file) => file.endsWith('.ts') && !['run.ts', 'lib.ts'].includes(file))
  .map((file) => file.replace(/\.ts$/, ''))
  .filter((name) => !only || only.includes(name));

const results: Record<string, Record<string, number | string>> = {};
for (const name of names) {
  const module = (await import(`./${name}.ts`)) as { default: (options: Record<string, unknown>) => Promise<Record<string, number | string>> };
  console.log(`\n=== ${name}`);
  const started = Date.now();
  try {
    results[name] = await module.default({ seconds, env });
    console.table(results[name]);
  } catch (error) {
    console.error(`${name} failed:`, error);
    process.exitCode = 1;
  }
  console.log(`(${((Date.now() - started) / 1000).toFixed(1)} s)`);
}
console.log(`\n${JSON.stringify({ node: process.version, cpus: (await import('node:os')).cpus().length, results }, null, 2)}`);
