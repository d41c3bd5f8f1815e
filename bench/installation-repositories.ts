// GET /installation/repositories?per_page=30 polled with If-None-Match (304, decided from one
// statement) and fetched whole (200), each against a bare node:http server answering the same bytes
// in the same run; the codehost process's CPU per request beside each.
// Run directly: node bench/installation-repositories.ts (BENCH_DATABASE=postgres; BENCH_CPU_PROF_DIR=dir: a CPU profile of the server).
import { fileURLToPath } from 'node:url';
import { signAppJwt, type TestApp } from '../test/helpers/credentials.ts';
import { capture, compareLoads, cpuSeconds, startBaseline, startServerOnOwnDatabase, warmUp } from './lib.ts';

export interface Options {
  seconds?: number;
  connections?: number;
  env?: Record<string, string>;
}

/** Repositories the installation reaches: the page of 30 is full, and the list has a next page. */
const REPOSITORIES = 40;

export default async function installationRepositories(options: Options = {}): Promise<Record<string, number | string>> {
  const seconds = options.seconds ?? 10;
  const server = await startServerOnOwnDatabase(options.env);
  try {
    await server.admin('POST', '/users', { login: 'mona' });
    await server.admin('POST', '/orgs', { login: 'acme', owners: ['mona'] });
    for (let i = 0; i < REPOSITORIES; i++) await server.admin('POST', '/repos', { owner: 'acme', name: `repo-${i}`, visibility: i % 2 ? 'private' : 'public' });
    const app = (await server.admin('POST', '/apps', { slug: 'bench-app', permissions: { metadata: 'read' } })) as TestApp;
    const installation = await server.admin('POST', '/apps/bench-app/installations', { account: 'acme', repositories: 'all' });
    const minted = await fetch(`${server.apiUrl}/app/installations/${installation.id}/access_tokens`, {
      method: 'POST',
      headers: { authorization: `Bearer ${await signAppJwt(app)}`, accept: 'application/vnd.vendor+json' },
    });
    if (minted.status !== 201) throw new Error(`minting answered ${minted.status}: ${await minted.text()}`);
    const { token } = (await minted.json()) as { token: string };
    const url = `${server.apiUrl}/installation/repositories?per_page=30`;
    const headers = { authorization: `Bearer ${token}`, accept: 'application/vnd.vendor+json' };
    const page = await capture(url, { headers });
    if (page.status !== 200) throw new Error(`the list answered ${page.status}: ${page.body}`);
    const results: Record<string, number | string> = {};
    for (const [name, requestHeaders, status] of [
      ['poll If-None-Match', { ...headers, 'if-none-match': page.headers.etag! }, 304],
      ['list', headers, 200],
    ] as const) {
      const sample = await capture(url, { headers: requestHeaders });
      if (sample.status !== status) throw new Error(`${name} answered ${sample.status}`);
      const bare = await startBaseline(sample);
      try {
        const sides = [
          { url: bare.url, headers: requestHeaders, seconds, connections: options.connections },
          { url, headers: requestHeaders, seconds, connections: options.connections },
        ] as const;
        await warmUp(...sides);
        const cpuBefore = cpuSeconds([server.pid]);
        const compared = await compareLoads(...sides);
        if (compared.real.errors || (status === 200 && compared.real.non2xx)) throw new Error(`${name}: ${compared.real.errors} errors, ${compared.real.non2xx} non-2xx`);
        const served = compared.real.requestsPerSecond * seconds;
        Object.assign(results, {
          [`installation repositories ${name} req/s (codehost)`]: Math.round(compared.real.requestsPerSecond),
          [`installation repositories ${name} req/s ratio codehost/bare`]: compared.ratio,
          [`installation repositories ${name} CPU ms per request, codehost process`]: Number((((cpuSeconds([server.pid]) - cpuBefore) * 1000) / served).toFixed(3)),
        });
      } finally {
        await bare.stop();
      }
    }
    const after = await capture(url, { headers: { ...headers, 'if-none-match': page.headers.etag! } });
    if (after.status !== 304) throw new Error(`the poll answered ${after.status} after the load (nothing changed)`);
    return results;
  } finally {
    await server.stop();
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const env: Record<string, string> = process.env.BENCH_DATABASE === 'postgres' && process.env.DATABASE_URL ? { DATABASE_URL: process.env.DATABASE_URL } : {};
  console.table(await installationRepositories({ seconds: Number(process.env.BENCH_SECONDS ?? 10), env }));
}
