// /healthz asked every 20 ms from another process while something runs in this one: the slowest
// answer meanwhile says whether this process kept answering (test/testing/reset-large.test.ts,
// scripts/measure-reset.ts).
import { spawn } from 'node:child_process';

/** Runs `run` while another process asks `url`/healthz every 20 ms: how long it took and /healthz's slowest answer meanwhile (ms). */
export async function slowestHealthz<T>(url: string, run: () => Promise<T>): Promise<{ result: T; tookMs: number; slowestMs: number }> {
  const pinger = spawn(process.execPath, ['-e', `
    let worst = 0;
    process.on('SIGTERM', () => { console.log(Math.round(worst)); process.exit(0); });
    (async () => { for (;;) {
      const started = performance.now();
      await fetch(${JSON.stringify(`${url}/healthz`)}).then((r) => r.text()).catch(() => {});
      worst = Math.max(worst, performance.now() - started);
      await new Promise((r) => setTimeout(r, 20));
    } })();
    console.log('ready');
  `]);
  let out = '';
  pinger.stdout.on('data', (chunk) => (out += chunk));
  while (!out.includes('ready')) await new Promise((r) => setTimeout(r, 10));
  const started = performance.now();
  const result = await run();
  const tookMs = performance.now() - started;
  await new Promise((r) => setTimeout(r, 100));
  pinger.kill('SIGTERM');
  await new Promise((r) => pinger.on('exit', r));
  return { result, tookMs, slowestMs: Number(out.trim().split('\n').at(-1)) };
}
