// What CI does for "A suite in another project" (docs/testing.md): in a directory outside the
// repository, a fresh clone of HEAD (as .ci/install makes one) is installed into copies of
// examples/node-test, examples/vitest and examples/pytest by the docs' own commands (tarball, path,
// git URL), and each suite passes: node:test and vitest on Node 22 and Node 24 (the binaries of
// npm's packages node@22 and node@24, fetched as .ci/install fetches them), pytest with PyGithub.
// On a Node older than 22.18 (the machine's Node 20, or npm's node@20 when the machine's is newer)
// `codehost/testing` stops with its one line and `codehost/testing/child` passes.
import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import { cpSync, existsSync, lstatSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';
import { pythonWithPyGithub, skipReason } from '../clients/tools.ts';

const ROOT = new URL('../..', import.meta.url).pathname.replace(/\/$/, '');
const exec = promisify(execFile);
const NPM = '--prefer-offline --no-audit --no-fund';

/** The environment of a user's shell: no npm_* variables of the run that started this test, no DATABASE_URL. */
function shellEnv(path = process.env.PATH ?? ''): NodeJS.ProcessEnv {
  const env = Object.fromEntries(Object.entries(process.env).filter(([key]) => !/^npm_/i.test(key) && key !== 'DATABASE_URL' && key !== 'NODE_OPTIONS' && !key.startsWith('NODE_TEST')));
  return { ...env, PATH: path, NO_COLOR: '1' };
}

async function sh(script: string, cwd: string, path?: string): Promise<string> {
  try {
    const { stdout } = await exec('sh', ['-ec', script], { cwd, env: shellEnv(path), timeout: 170_000, maxBuffer: 16 << 20 });
    return stdout;
  } catch (error) {
    const { stdout, stderr } = error as { stdout?: string; stderr?: string };
    throw new Error(`${script} (in ${cwd}) failed:\n${stdout ?? ''}\n${stderr ?? ''}`);
  }
}

/** The code of the block of docs/testing.md tagged `name`. */
function docBlock(name: string): string {
  const text = readFileSync(join(ROOT, 'docs/testing.md'), 'utf8');
  const blocks = [...text.matchAll(/^```[\w-]+ ([\w-]+)\n([\s\S]*?)^```$/gm)].filter((match) => match[1] === name);
  if (blocks.length !== 1) throw new Error(`docs/testing.md has ${blocks.length} blocks tagged ${name}`);
  return blocks[0]![2]!;
}

/** A copy of examples/`name` as a project of its own: codehost is installed into it by the caller. */
function project(work: string, name: string, as = name): string {
  const dir = join(work, as);
  cpSync(join(ROOT, 'examples', name), dir, { recursive: true, filter: (source) => !source.includes('node_modules') });
  const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
  delete manifest.devDependencies.codehost; // `file:../..`: the repository, which is not there
  writeFileSync(join(dir, 'package.json'), JSON.stringify(manifest, null, 2));
  return dir;
}

/** A `node` on PATH outside any node_modules (npm's run puts the pinned one first), with its version. */
function machineNode(): { bin: string; version: string } | null {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (dir.includes('node_modules') || !existsSync(join(dir, 'node'))) continue;
    const version = spawnSync(join(dir, 'node'), ['--version'], { encoding: 'utf8' }).stdout.trim();
    if (version) return { bin: join(dir, 'node'), version };
  }
  return null;
}

const tooOldForTypeScript = (version: string) => {
  const [major, minor] = version.replace(/^v/, '').split('.').map(Number) as [number, number];
  return major < 22 || (major === 22 && minor < 18) || (major === 23 && minor < 6);
};

/** npm's package node@`line` (its binary), as .ci/install fetches it. */
async function npmNode(work: string, line: string): Promise<string> {
  await sh(`npm install -s ${NPM} --prefix node${line} node@${line} >/dev/null`, work);
  return join(work, `node${line}`, 'node_modules/node/bin/node');
}

const tapCounts = (output: string) => ({ pass: Number(/^# pass (\d+)/m.exec(output)?.[1]), fail: Number(/^# fail (\d+)/m.exec(output)?.[1]) });

// Three suites at a time: each mostly waits for a server to start.
describe('a suite in another project', { concurrency: 3, skip: process.env.DATABASE_URL ? 'runs once, in the SQLite pass (the examples use the embedded database)' : false }, () => {
  let work: string;
  const nodes: Record<string, string> = {};
  let oldNode: { bin: string; version: string };
  const timings: Record<string, number> = {};
  const timed = async <T>(label: string, run: () => Promise<T>) => {
    const started = Date.now();
    try {
      return await run();
    } finally {
      timings[label] = Date.now() - started;
    }
  };

  before(async () => {
    work = mkdtempSync(join(tmpdir(), 'codehost-another-project-'));
    assert.ok(!work.startsWith(`${ROOT}/`), 'the projects are outside the repository');
    await sh(`git clone -q --no-local ${JSON.stringify(ROOT)} codehost`, work);
    const machine = machineNode();
    const olderNode = machine && tooOldForTypeScript(machine.version) ? Promise.resolve(machine.bin) : npmNode(work, '20');
    const node = project(work, 'node-test');
    const path = project(work, 'node-test', 'node-test-path');
    const git = project(work, 'node-test', 'node-test-git');
    // The docs' three ways, as written, each run from the project's directory beside the checkout.
    // The vitest and pytest projects install a tarball of their own, packed first, so that every
    // install runs at once.
    await sh('mkdir packs && npm pack -s --pack-destination packs ./codehost >/dev/null', work);
    const [tarball] = readdirSync(join(work, 'packs'));
    const [node22, node24, older] = await Promise.all([
      timed('node@22', () => npmNode(work, '22')),
      timed('node@24', () => npmNode(work, '24')),
      olderNode,
      timed('install from the tarball (npm pack, npm install)', () => sh(docBlock('install-tarball'), node)),
      timed('install from the path (npm ci --omit=dev in the checkout, npm install)', () => sh(docBlock('install-path'), path)),
      timed('install from the git URL', () => sh(docBlock('install-git'), git)),
      ...['vitest', 'pytest'].map((name) => timed(`install ${name} from the tarball`, () => sh(`npm install -s ${NPM} --save-dev ../packs/${tarball} >/dev/null`, project(work, name)))),
    ]);
    assert.ok(readdirSync(work).some((name) => /^codehost-.*\.tgz$/.test(name)), 'the docs\' npm pack wrote the tarball beside the projects');
    Object.assign(nodes, { 22: node22, 24: node24 });
    oldNode = { bin: older, version: spawnSync(older, ['--version'], { encoding: 'utf8' }).stdout.trim() };
    console.log(`another project: ${Object.entries(timings).map(([label, ms]) => `${label} ${(ms / 1000).toFixed(1)} s`).join('; ')}`);
  }, { timeout: 240_000 });

  after(() => {
    if (work) rmSync(work, { recursive: true, force: true });
  });

  test('each install put codehost where the docs say: a copy from the tarball and the git URL, a link to the checkout from the path', () => {
    for (const [dir, linked] of [['node-test', false], ['node-test-git', false], ['node-test-path', true]] as const) {
      assert.equal(lstatSync(join(work, dir, 'node_modules/codehost')).isSymbolicLink(), linked, dir);
      // The pinned Node.js: beside the copy, or in the linked checkout's dependencies.
      assert.ok(existsSync(join(work, linked ? 'codehost' : dir, 'node_modules/node/bin/node')), `${dir}: the pinned Node.js is installed`);
    }
  });

  for (const line of ['22', '24']) {
    test(`node:test on Node ${line}: the in-process helper and the child mode pass (installed from the tarball)`, async () => {
      const output = await sh(`${nodes[line]} --test --test-reporter=tap`, join(work, 'node-test'));
      assert.deepEqual(tapCounts(output), { pass: 4, fail: 0 }, output);
    });

    test(`vitest on Node ${line}: the examples pass (in-process, its calls journaled without warnings; the child mode)`, async () => {
      const output = await sh(`${nodes[line]} node_modules/vitest/vitest.mjs run --reporter=json`, join(work, 'vitest'));
      const report = JSON.parse(output.slice(output.indexOf('{')));
      assert.equal(report.numPassedTests, 3, output);
      assert.equal(report.numFailedTests, 0);
      assert.equal(report.success, true);
    });
  }

  test('node:test from the path and the git URL installs (Node 24)', async () => {
    for (const dir of ['node-test-path', 'node-test-git']) {
      const output = await sh(`${nodes['24']} --test --test-reporter=tap`, join(work, dir));
      assert.deepEqual(tapCounts(output), { pass: 4, fail: 0 }, `${dir}: ${output}`);
    }
  });

  test('on a Node older than 22.18 codehost/testing stops with one line, and the child mode passes under node:test and vitest', async () => {
    const dir = join(work, 'node-test');
    const failed = await exec(oldNode.bin, ['--input-type=module', '-e', "await import('codehost/testing')"], { cwd: dir, env: shellEnv() }).then(() => null, (error: { stderr: string }) => error);
    assert.ok(failed, `${oldNode.version}: the import failed`);
    const lines = failed.stderr.split('\n').filter((line) => line.includes('codehost/testing'));
    assert.equal(lines.length, 1, failed.stderr);
    assert.match(lines[0]!, new RegExp(`needs Node\\.js 22\\.18 or later .*; this is Node\\.js ${oldNode.version.replace(/\./g, '\\.')}\\. .*'codehost/testing/child'`));
    const output = await sh(`${oldNode.bin} --test --test-reporter=tap child.test.js`, dir);
    assert.deepEqual(tapCounts(output), { pass: 2, fail: 0 }, output);
    // vitest too, on the same Node (which has no node:sqlite): the child mode's file passes.
    const vitest = await sh(`${oldNode.bin} node_modules/vitest/vitest.mjs run --reporter=json child.vitest.js`, join(work, 'vitest'));
    const report = JSON.parse(vitest.slice(vitest.indexOf('{')));
    assert.deepEqual([report.numPassedTests, report.numFailedTests, report.success], [1, 0, true], vitest);
  });

  const python = pythonWithPyGithub();
  test('pytest with PyGithub: the fixture starts the installed package\'s `codehost` on the pinned Node', { skip: skipReason(python, 'PyGithub is not installed (Debian: apt-get install python3-github python3-pytest)') }, async () => {
    // The older Node first on PATH: the bin runs itself again on the pinned Node.js 24.
    const output = await sh(`${python} -m pytest -q -p no:cacheprovider`, join(work, 'pytest'), `${dirname(oldNode.bin)}${delimiter}${process.env.PATH}`);
    assert.match(output, /2 passed/);
  });

  test('docs/testing.md shows the examples as they are', () => {
    assert.equal(docBlock('vitest'), readFileSync(join(ROOT, 'examples/vitest/issues.vitest.js'), 'utf8'));
    assert.equal(docBlock('child'), readFileSync(join(ROOT, 'examples/node-test/child.test.js'), 'utf8'));
    assert.equal(docBlock('pytest'), readFileSync(join(ROOT, 'examples/pytest/test_codehost.py'), 'utf8'));
  });
});
