// Every sh / bash block of README.md and docs/ runs as written, against a fresh server started as
// `npm start` starts it (embedded SQLite, demo data) on a port of the test's choosing, with
// `set -euo pipefail`: the blocks of each "Walk-through" section, in order, in one bash (as a reader
// pastes them into one shell), and each file's other blocks likewise. A block that cannot run here
// says so in its first line, with the reason: `# not run by the tests: <why>`. The blocks name the
// server as $CODEHOST_URL (`${CODEHOST_URL:-http://127.0.0.1:3000}` where they set their base), never
// a hard-coded port: the shell gets CODEHOST_URL (the address the server printed) and
// CODEHOST_ADMIN_TOKEN (the token it was started with), and nothing else of the server. Nothing may
// be written into the repository. CODEHOST_TEST_WALKTHROUGH_OUTPUT=1 prints what the blocks printed.
import assert from 'node:assert/strict';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { freePort } from '../helpers/process.ts';

const ROOT = new URL('../..', import.meta.url).pathname;
const DOCS = join(ROOT, 'docs');

/** The marker of a block that is not run, with its reason. */
const NOT_RUN = /^# not run by the tests: \S/;

interface Walkthrough {
  file: string;
  heading: string;
  blocks: string[];
}

interface Block {
  text: string;
  /** The name after the fence's language (```sh install-path): a test that runs the block by it. */
  tag: string | null;
  /** The "Walk-through" section the block is in, if any. */
  walkthrough: string | null;
}

/** The sh/bash blocks of a markdown file, each with the "Walk-through" section it is in (a heading with that word, up to the next heading of its level or above). */
export function shellBlocks(markdown: string): Block[] {
  const found: Block[] = [];
  let current: { heading: string; level: number } | null = null;
  let fence: { marker: string; lang: string; tag: string | null; lines: string[] } | null = null;
  for (const line of markdown.split('\n')) {
    if (fence) {
      if (line.trim() === fence.marker) {
        if (fence.lang === 'sh' || fence.lang === 'bash') found.push({ text: fence.lines.join('\n'), tag: fence.tag, walkthrough: current?.heading ?? null });
        fence = null;
      } else fence.lines.push(line);
      continue;
    }
    const opening = /^\s*(`{3,}|~{3,})\s*([\w-]*)(?:\s+([\w-]+))?/.exec(line);
    if (opening) {
      fence = { marker: opening[1]!, lang: opening[2]!.toLowerCase(), tag: opening[3] ?? null, lines: [] };
      continue;
    }
    const heading = /^(#{1,6})\s+(.*)$/.exec(line);
    if (heading) {
      const level = heading[1]!.length;
      if (current && level <= current.level) current = null;
      if (!current && /walk-?through/i.test(heading[2]!)) current = { heading: heading[2]!.trim(), level };
    }
  }
  return found;
}

const FILES = ['README.md', ...readdirSync(DOCS).filter((name) => name.endsWith('.md')).sort().map((name) => `docs/${name}`)];
const blocksOf = new Map(FILES.map((file) => [file, shellBlocks(readFileSync(join(ROOT, file), 'utf8'))]));

/**
 * Blocks run by another test, as their reader runs them, not on a fresh server here: the installs of
 * codehost into a project of one's own (from beside a checkout: `../codehost`), the image's build and runs.
 */
const RUN_ELSEWHERE: Record<string, string> = {
  'install-path': 'test/testing/another-project.test.ts',
  'install-tarball': 'test/testing/another-project.test.ts',
  'install-git': 'test/testing/another-project.test.ts',
  'image-build': 'test/deploy/image.test.ts',
  'image-laptop': 'test/deploy/image.test.ts',
  'image-production': 'test/deploy/image.test.ts',
  'image-stop': 'test/deploy/image.test.ts',
};
const runHere = (block: Block) => !NOT_RUN.test(block.text) && !(block.tag !== null && block.tag in RUN_ELSEWHERE);

/** What runs, each against its own fresh server: every walk-through, then each file's other runnable blocks. */
const all: Walkthrough[] = FILES.flatMap((file) => {
  const runnable = blocksOf.get(file)!.filter(runHere);
  const units: Walkthrough[] = [];
  for (const block of runnable) {
    const heading = block.walkthrough ?? 'the blocks outside walk-throughs';
    const unit = units.find((u) => u.heading === heading) ?? units[units.push({ file, heading, blocks: [] }) - 1]!;
    unit.blocks.push(block.text);
  }
  return units;
});

test('the docs have walk-throughs, each with shell blocks', () => {
  assert.ok(all.filter((walk) => walk.heading !== 'the blocks outside walk-throughs').length >= 4, `${all.length} walk-throughs`);
  for (const walk of all) assert.ok(walk.blocks.length > 0, `${walk.file} "${walk.heading}" has no sh/bash block`);
});

test('every block not run says why, and every block run names the server as $CODEHOST_URL, not a port', () => {
  let skipped = 0;
  for (const [file, blocks] of blocksOf) {
    for (const block of blocks) {
      if (NOT_RUN.test(block.text)) {
        skipped += 1;
        continue;
      }
      if (!runHere(block)) {
        // Run by the test that names its tag, as the docs say.
        const owner = RUN_ELSEWHERE[block.tag!]!;
        assert.ok(readFileSync(join(ROOT, owner), 'utf8').includes(`'${block.tag}'`), `${file}: block ${block.tag} is said to be run by ${owner}, which does not name it`);
        continue;
      }
      // Commented-out output may show the address a default start prints.
      const code = block.text.split('\n').map((line) => line.replace(/(^|\s)#.*$/, '')).join('\n').replaceAll('${CODEHOST_URL:-http://127.0.0.1:3000}', '$CODEHOST_URL');
      assert.doesNotMatch(code, /(127\.0\.0\.1|localhost):\d+/, `${file}: a block names a fixed address:\n${block.text}`);
    }
  }
  assert.ok(skipped < [...blocksOf.values()].flat().length / 2, 'most blocks run');
});

test('the walk-throughs link nowhere outside the repository', () => {
  for (const walk of all) {
    const text = readFileSync(join(ROOT, walk.file), 'utf8');
    assert.ok(!/\.\.\/shared\//.test(text), `${walk.file} links to ../shared`);
  }
});

async function waitForServer(url: string, server: ChildProcess, output: () => string): Promise<void> {
  const deadline = Date.now() + 120_000;
  for (;;) {
    if (server.exitCode !== null) assert.fail(`the server exited (${server.exitCode}):\n${output()}`);
    try {
      if ((await fetch(`${url}/openapi.json`)).ok) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) assert.fail(`the server did not start:\n${output()}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

function runBash(script: string, env: NodeJS.ProcessEnv, timeoutMs: number): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    // A process group of its own, so whatever the blocks start in the background goes with it.
    const child = spawn('bash', ['-c', script], { cwd: ROOT, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    const timer = setTimeout(() => {
      output += `\n[timed out after ${timeoutMs} ms]`;
      process.kill(-child.pid!, 'SIGKILL');
    }, timeoutMs);
    child.on('exit', (code) => {
      clearTimeout(timer);
      try {
        process.kill(-child.pid!, 'SIGTERM');
      } catch {
        // the group is gone already
      }
      resolve({ code, output });
    });
  });
}

const gitStatus = () => execFileSync('git', ['status', '--porcelain', '--untracked-files=all'], { cwd: ROOT, encoding: 'utf8' });

for (const walk of all) {
  test(`${walk.file}: "${walk.heading}" runs as written on a fresh server`, { skip: process.env.DATABASE_URL ? 'the walk-throughs use the embedded SQLite database and its demo data' : false, timeout: 240_000 }, async () => {
    const port = await freePort();
    const dataDir = mkdtempSync(join(tmpdir(), 'codehost-walkthrough-'));
    const adminToken = `walkthrough-${randomBytes(8).toString('hex')}`;
    const { DATABASE_URL: _ignored, CODEHOST_PORT: _port, CODEHOST_URL: _url, ...environment } = process.env;
    let serverOutput = '';
    // As `npm start` starts it: `node src/main.ts serve`, demo data on a new embedded database.
    const server = spawn(process.execPath, ['src/main.ts', 'serve'], {
      cwd: ROOT,
      env: { ...environment, CODEHOST_PORT: String(port), CODEHOST_HOST: '127.0.0.1', CODEHOST_DATA_DIR: dataDir, CODEHOST_ADMIN_TOKEN: adminToken, CODEHOST_LOG_LEVEL: 'warn' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    server.stdout!.on('data', (chunk) => (serverOutput += chunk));
    server.stderr!.on('data', (chunk) => (serverOutput += chunk));
    const before = gitStatus();
    try {
      await waitForServer(`http://127.0.0.1:${port}`, server, () => serverOutput);
      const script = walk.blocks.map((block, index) => `echo '### block ${index + 1} of ${walk.blocks.length}' >&2\n${block}`).join('\n');
      const scriptFile = join(dataDir, 'walkthrough.sh');
      writeFileSync(scriptFile, `set -euo pipefail\n${script}\n`);
      const { code, output } = await runBash(`source ${JSON.stringify(scriptFile)}`, {
        ...environment,
        CODEHOST_ADMIN_TOKEN: adminToken,
        CODEHOST_URL: `http://127.0.0.1:${port}`,
      }, 180_000);
      if (process.env.CODEHOST_TEST_WALKTHROUGH_OUTPUT) console.log(output);
      assert.equal(code, 0, `${walk.file} "${walk.heading}" failed:\n${output}\n--- server output:\n${serverOutput}`);
      assert.equal(gitStatus(), before, 'the walk-through wrote into the repository');
    } finally {
      server.kill('SIGTERM');
      if (server.exitCode === null) await new Promise((resolve) => server.once('exit', resolve));
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
}
