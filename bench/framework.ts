// The floor under the request rows: Fastify (the framework codehost is built on), with one route and
// no hook, answering the very bytes codehost answered, against the bare node:http server answering
// them, in turns, in the same run. A poll's 304 (GET /notifications with If-None-Match) and the token
// check's 200 (POST /applications/{client_id}/token). The ratio Fastify/bare is as high as any
// codehost route's ratio can be; codehost's own ratio is measured beside it with the same load, and
// its server CPU per answer against Fastify's (the poll's goal: within 2×).
import { capture, compareLoads, cpuSeconds, ratio, startBaseline, startServerOnOwnDatabase, warmUp, type Baseline } from './lib.ts';

export interface Options {
  seconds?: number;
  env?: Record<string, string>;
}

export default async function framework(options: Options = {}): Promise<Record<string, number | string>> {
  const seconds = options.seconds ?? 10;
  const server = await startServerOnOwnDatabase(options.env);
  try {
    await server.admin('POST', '/users', { login: 'mona' });
    const { token } = await server.admin('POST', '/tokens', { login: 'mona', kind: 'classic', scopes: ['notifications'] });
    const app = await server.admin('POST', '/apps', { slug: 'floor-app' });
    const authorization = await server.admin('POST', '/apps/floor-app/authorizations', { login: 'mona', scopes: ['repo'] });

    const listUrl = `${server.apiUrl}/notifications`;
    const headers = { authorization: `Bearer ${token}`, accept: 'application/vnd.vendor+json' };
    const first = await capture(listUrl, { headers });
    const poll = { url: listUrl, headers: { ...headers, 'if-none-match': first.headers.etag! } };
    const check = {
      url: `${server.apiUrl}/applications/${app.client_id}/token`,
      method: 'POST',
      headers: {
        authorization: `Basic ${Buffer.from(`${app.client_id}:${app.client_secret}`).toString('base64')}`,
        'content-type': 'application/json',
        accept: 'application/vnd.vendor+json',
      },
      body: JSON.stringify({ access_token: authorization.token }),
    };

    const results: Record<string, number | string> = {};
    for (const [name, request, expected] of [['poll 304', poll, 304], ['token check', check, 200]] as const) {
      const sample = await capture(request.url, request);
      if (sample.status !== expected) throw new Error(`${name} answered ${sample.status}: ${sample.body}`);
      const started: Baseline[] = [];
      try {
        const bare = await startBaseline(sample);
        started.push(bare);
        const fastify = await startBaseline(sample, 'fastify');
        started.push(fastify);
        const path = new URL(request.url).pathname;
        const at = (baseline: Baseline) => ({ ...request, url: `${baseline.url}${path}`, seconds });
        // Warm each up, then Fastify against bare and codehost against bare, in turns.
        await warmUp(at(bare), at(fastify), request);
        const fastifyCpu = cpuSeconds([fastify.pid]);
        const floor = await compareLoads(at(bare), at(fastify));
        const fastifyMs = ((cpuSeconds([fastify.pid]) - fastifyCpu) * 1000) / (floor.real.requestsPerSecond * seconds);
        const serverCpu = cpuSeconds([server.pid]);
        const real = await compareLoads(at(bare), { ...request, seconds });
        const serverMs = ((cpuSeconds([server.pid]) - serverCpu) * 1000) / (real.real.requestsPerSecond * seconds);
        if (real.real.non2xx && expected === 200) throw new Error(`codehost answered ${real.real.non2xx} non-2xx`);
        Object.assign(results, {
          [`${name}: Fastify alone req/s ratio fastify/bare`]: floor.ratio,
          [`${name}: codehost req/s ratio codehost/bare`]: real.ratio,
          [`${name}: codehost/Fastify alone`]: ratio(real.real.requestsPerSecond, floor.real.requestsPerSecond),
          [`${name}: Fastify alone CPU ms per request`]: Number(fastifyMs.toFixed(3)),
          [`${name}: codehost CPU ms per request`]: Number(serverMs.toFixed(3)),
          // The pipeline's own cost: codehost's server CPU for the same answer as Fastify alone's.
          [`${name}: server CPU ratio codehost/Fastify alone`]: Number((serverMs / fastifyMs).toFixed(2)),
        });
      } finally {
        for (const baseline of started) await baseline.stop();
      }
    }
    return results;
  } finally {
    await server.stop();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const postgres = process.argv.includes('--postgres');
  console.table(await framework({ seconds: Number(process.env.BENCH_SECONDS ?? 10), env: postgres ? { DATABASE_URL: process.env.DATABASE_URL! } : {} }));
}
