// The image (Containerfile) as docs/deployment.md "In a container" builds and runs it: its blocks
// `image-build`, `image-laptop`, `image-production` and `image-stop`, each run as written in bash,
// with the flags this kind of machine needs added to `podman build` and `podman run` by a shell
// function (`--runtime runc`, explicit ulimits, `--pull=never`: no image registry is reachable here,
// so the base the Containerfile names is made from Debian's packages with mmdebstrap and tagged as
// it). Laptop mode with no settings but the port: the demo data, the health check, the demo token,
// a non-root user on a read-only root filesystem; production mode by settings on this run's
// database (the embedded one in /data, or this machine's PostgreSQL through the host network): the
// demo token refused; then SIGTERM stops both with exit status 0.
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { createTestDatabase, engine, type TestDatabase } from '../helpers/database.ts';
import { freePort } from '../helpers/process.ts';

const ROOT = new URL('../..', import.meta.url).pathname.replace(/\/$/, '');
const BASE = 'docker.io/library/debian:bookworm-slim';
const DEMO_TOKEN = 'chp_DemoMonaClassicToken00000000013Mkcu6';
const CA = '/etc/ssl/certs/ca-certificates.crt';
const CONTAINERS = ['codehost-laptop', 'codehost'];

const has = (command: string) => {
  try {
    execFileSync('sh', ['-c', `command -v ${command}`], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
};
const missing = ['podman', 'runc', 'mmdebstrap'].filter((command) => !has(command));
// CI installs them (.ci/run): there a missing tool is a failure, not a skip.
const skip = missing.length && !process.env.CI ? `needs ${missing.join(', ')} (Debian: apt-get install podman runc mmdebstrap; .ci/run installs them)` : false;

/** docs/deployment.md's ```sh <tag> blocks, by tag. */
function taggedBlocks(markdown: string): Map<string, string> {
  const blocks = new Map<string, string>();
  let open: { tag: string; lines: string[] } | null = null;
  for (const line of markdown.split('\n')) {
    if (open) {
      if (line.trim() === '```') {
        blocks.set(open.tag, open.lines.join('\n'));
        open = null;
      } else open.lines.push(line);
      continue;
    }
    const fence = /^```sh\s+([\w-]+)\s*$/.exec(line);
    if (fence) open = { tag: fence[1]!, lines: [] };
  }
  return blocks;
}

const BLOCKS = taggedBlocks(readFileSync(join(ROOT, 'docs/deployment.md'), 'utf8'));

/** This machine's podman: runc, explicit ulimits, the host's network, no pulls, the CA of the egress proxy for `npm ci`. */
const PODMAN = `podman() {
  case "$1" in
    build) shift; command podman --runtime runc build --pull=never --network host ${existsSync(CA) ? `--secret id=ca,src=${CA}` : ''} --ulimit nofile=1024:1024 --ulimit nproc=1024:1024 "$@" ;;
    run) shift; command podman --runtime runc run --ulimit nofile=1024:1024 --ulimit nproc=1024:1024 "$@" ;;
    *) command podman --runtime runc "$@" ;;
  esac
}`;

/** Runs a block of the docs in bash (`set -euo pipefail`) from the checkout, with `env` added; its output and how long it took. */
async function runBlock(tag: string, env: Record<string, string>, timeoutMs: number): Promise<{ output: string; ms: number }> {
  const block = BLOCKS.get(tag);
  assert.ok(block, `docs/deployment.md has a \`\`\`sh ${tag} block`);
  const started = performance.now();
  const child = spawn('bash', ['-c', `set -euo pipefail\n${PODMAN}\n${block}`], { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (chunk) => (output += chunk));
  child.stderr.on('data', (chunk) => (output += chunk));
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  clearTimeout(timer);
  assert.equal(code, 0, `block ${tag} exited ${code}:\n${output}`);
  return { output, ms: performance.now() - started };
}

const podman = (...args: string[]) => execFileSync('podman', ['--runtime', 'runc', ...args], { encoding: 'utf8' }).trim();
const podmanStatus = (...args: string[]) => {
  try {
    execFileSync('podman', ['--runtime', 'runc', ...args], { stdio: 'ignore' });
    return 0;
  } catch (err) {
    return (err as { status?: number }).status ?? 1;
  }
};
const removeContainers = () => {
  for (const name of CONTAINERS) podmanStatus('rm', '-f', '-v', name);
};

describe('the image, as docs/deployment.md builds and runs it', { skip, timeout: 20 * 60_000 }, () => {
  let database: TestDatabase;
  const ports = { laptop: 0, production: 0 };

  before(async () => {
    removeContainers();
    database = await createTestDatabase();
    ports.laptop = await freePort();
    ports.production = await freePort();
    if (podmanStatus('image', 'exists', BASE) !== 0) {
      // The base the Containerfile names, from Debian's packages (the host's apt sources).
      const dir = mkdtempSync(join(tmpdir(), 'codehost-base-'));
      try {
        execFileSync('mmdebstrap', ['--quiet', '--variant=minbase', '--include=ca-certificates', 'bookworm', join(dir, 'base.tar')], { stdio: 'ignore', timeout: 10 * 60_000 });
        podman('import', join(dir, 'base.tar'), BASE);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    }
  });

  after(async () => {
    removeContainers();
    // What rebuilds left untagged.
    podmanStatus('image', 'prune', '-f');
    await database?.drop();
  });

  test('it builds (image-build): a docker-format image with its health check, run as uid 10001', async (t) => {
    const { ms } = await runBlock('image-build', {}, 15 * 60_000);
    const [user, size, healthcheck] = podman('image', 'inspect', 'localhost/codehost', '--format', '{{.Config.User}}\t{{.Size}}\t{{json .Config.Healthcheck}}').split('\t');
    assert.equal(user, '10001:10001');
    assert.match(healthcheck!, /healthcheck\.js/);
    t.diagnostic(`built in ${(ms / 1000).toFixed(1)} s; image ${(Number(size) / 1e6).toFixed(0)} MB`);
  });

  test('laptop mode with no settings but the port (image-laptop): demo data, healthy, the demo token answers; non-root on a read-only root filesystem', async (t) => {
    const { output, ms } = await runBlock('image-laptop', { CODEHOST_PORT: String(ports.laptop) }, 180_000);
    t.diagnostic(`podman run to /readyz 200 and the health check: ${(ms / 1000).toFixed(1)} s`);
    assert.match(output, /^healthy$/m);
    assert.match(output, /Try the demo data/);
    const logs = podman('logs', 'codehost-laptop');
    assert.match(logs, /^mode: laptop/m);
    assert.match(logs, /^node: v24\./m);
    const answer = await fetch(`http://127.0.0.1:${ports.laptop}/api/v3/notifications`, { headers: { authorization: `Bearer ${DEMO_TOKEN}` } });
    assert.equal(answer.status, 200);
    assert.equal(podman('exec', 'codehost-laptop', 'id', '-u'), '10001');
    assert.notEqual(podmanStatus('exec', 'codehost-laptop', 'touch', '/app/written'), 0, 'the root filesystem is read-only');
    assert.equal(podmanStatus('exec', 'codehost-laptop', 'touch', '/data/written'), 0, '/data is writable');
  });

  test(`production mode by settings on ${engine} (image-production): healthy, the demo token refused`, async () => {
    const env: Record<string, string> = { CODEHOST_PORT: String(ports.production) };
    if (database.databaseUrl) env.DATABASE_URL = database.databaseUrl;
    const { output } = await runBlock('image-production', env, 180_000);
    assert.match(output, /^healthy$/m);
    const logs = podman('logs', 'codehost');
    assert.match(logs, /^mode: production/m);
    assert.match(logs, engine === 'postgres' ? /^database: PostgreSQL/m : /^database: \/data\/codehost\.db/m);
    const answer = await fetch(`http://127.0.0.1:${ports.production}/api/v3/notifications`, { headers: { authorization: `Bearer ${DEMO_TOKEN}` } });
    assert.equal(answer.status, 401, 'no demo data in production');
  });

  test('SIGTERM (image-stop): both finish what is in flight and exit 0', async () => {
    await runBlock('image-stop', {}, 60_000);
    for (const name of CONTAINERS) {
      assert.equal(podman('inspect', name, '--format', '{{.State.ExitCode}}'), '0', name);
      assert.match(podman('logs', name), /shutting down/, name);
    }
  });
});
