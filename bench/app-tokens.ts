// POST /applications/{client_id}/token with a valid token (Basic auth, token lookup, rate-limit
// upsert, serialization) against a bare node:http server answering the same bytes, in one run.
// Run directly: node bench/app-tokens.ts (BENCH_DATABASE=postgres; BENCH_CPU_PROF_DIR=dir: a CPU profile of the server).
import { capture, cpuSeconds, load, ratio, startBaseline, startServerOnOwnDatabase, warmUp } from './lib.ts';

export interface Options {
  seconds?: number;
  connections?: number;
  env?: Record<string, string>;
}

export default async function appTokens(options: Options = {}): Promise<Record<string, number | string>> {
  const seconds = options.seconds ?? 10;
  const server = await startServerOnOwnDatabase(options.env);
  try {
    await server.admin('POST', '/users', { login: 'mona' });
    const app = await server.admin('POST', '/apps', { slug: 'bench-app' });
    const { token } = await server.admin('POST', '/apps/bench-app/authorizations', { login: 'mona', scopes: ['repo'] });
    const url = `${server.apiUrl}/applications/${app.client_id}/token`;
    const headers = {
      authorization: `Basic ${Buffer.from(`${app.client_id}:${app.client_secret}`).toString('base64')}`,
      'content-type': 'application/json',
      accept: 'application/vnd.vendor+json',
    };
    const body = JSON.stringify({ access_token: token });
    const sample = await capture(url, { method: 'POST', headers, body });
    if (sample.status !== 200) throw new Error(`check answered ${sample.status}: ${sample.body}`);
    const baseline = await startBaseline(sample);
    try {
      // Warm both up, then measure the baseline and the server one after the other.
      await warmUp({ url: baseline.url, method: 'POST', headers, body }, { url, method: 'POST', headers, body, connections: options.connections });
      // CPU per request of each server process too: on a shared machine the throughput ratio moves
      // with what else runs (the load generator shares the cores), the CPU a request costs much less.
      const bareCpu = cpuSeconds([baseline.pid]) * 1000;
      const bare = await load({ url: baseline.url, method: 'POST', headers, body, seconds, connections: options.connections });
      const bareCpuPerRequest = (cpuSeconds([baseline.pid]) * 1000 - bareCpu) / (bare.requestsPerSecond * seconds);
      const realCpu = cpuSeconds([server.pid]) * 1000;
      const real = await load({ url, method: 'POST', headers, body, seconds, connections: options.connections });
      const realCpuPerRequest = (cpuSeconds([server.pid]) * 1000 - realCpu) / (real.requestsPerSecond * seconds);
      if (real.non2xx || real.errors) throw new Error(`codehost answered ${real.non2xx} non-2xx and ${real.errors} errors`);
      return {
        'check token req/s (codehost)': Math.round(real.requestsPerSecond),
        'check token req/s (bare node:http, same bytes)': Math.round(bare.requestsPerSecond),
        'check token ratio codehost/bare': ratio(real.requestsPerSecond, bare.requestsPerSecond),
        'check token server CPU ms/request (codehost)': Number(realCpuPerRequest.toFixed(3)),
        'check token server CPU ms/request (bare)': Number(bareCpuPerRequest.toFixed(3)),
        'check token CPU ratio bare/codehost': ratio(bareCpuPerRequest, realCpuPerRequest),
        'check token p50 ms': real.latencyP50Ms,
        'check token p99 ms': real.latencyP99Ms,
        'bare p99 ms': bare.latencyP99Ms,
      };
    } finally {
      await baseline.stop();
    }
  } finally {
    await server.stop();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  console.table(await appTokens({ seconds: Number(process.env.BENCH_SECONDS ?? 10) }));
}
