#!/usr/bin/env node
// The `codehost` command. codehost runs its TypeScript source directly, which Node.js does from
// 22.18 (types stripped without a flag). On such a Node this file imports the CLI; on an older one
// (a machine's Node 20, say) it runs itself again with the Node.js 24 that the dependency `node`
// installs beside codehost; without that either, it stops with one line naming the Node it needs.
// Plain JavaScript with nothing newer than Node 14's syntax, so that any Node can read it.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const NEEDED = 'Node.js 22.18 or later (24 is the line codehost pins and tests)';

/** Whether this Node runs .ts files without flags: 22.18+, 23.6+, 24+. */
function runsTypeScript(version) {
  const [major, minor] = version.replace(/^v/, '').split('.').map(Number);
  return major >= 24 || (major === 23 && minor >= 6) || (major === 22 && minor >= 18);
}

/** The binary of the pinned runtime (the dependency `node`), wherever npm put it, or null. */
function pinnedNode() {
  try {
    const bin = join(dirname(createRequire(import.meta.url).resolve('node/package.json')), 'bin', 'node');
    return existsSync(bin) ? bin : null;
  } catch {
    return null;
  }
}

const args = process.argv.slice(2);

if (runsTypeScript(process.version)) {
  const { run } = await import('../src/main.ts');
  run(args);
} else {
  const node = pinnedNode();
  if (!node || node === process.execPath) {
    console.error(
      `codehost needs ${NEEDED}; this is Node.js ${process.version} (${process.execPath}). ` +
        'Install Node.js 24 (or 22.18+), or install codehost with its dependencies (`npm ci --omit=dev` installs the pinned Node.js 24, the package `node`)',
    );
    process.exit(1);
  }
  // The pinned Node runs the CLI as a child; signals sent to this process are passed on, and its
  // exit status (or signal) is this process's.
  const child = spawn(node, [fileURLToPath(import.meta.url), ...args], { stdio: 'inherit' });
  for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP']) {
    process.on(signal, () => child.kill(signal));
  }
  child.on('error', (error) => {
    console.error(`codehost: cannot run the pinned Node.js at ${node} (${error.code || error.message}); reinstall with \`npm ci --omit=dev\`, or install ${NEEDED}`);
    process.exit(1);
  });
  child.on('exit', (code, signal) => {
    if (signal) {
      process.removeAllListeners(signal);
      process.kill(process.pid, signal);
    } else process.exit(code ?? 1);
  });
}
