#!/usr/bin/env node
// The `codehost` command. codehost runs its TypeScript source directly, which Node.js does from
// 22.18 (types stripped without a flag). On such a Node this file imports the CLI; on an older one
// (a machine's Node 20, say) it runs itself again with the Node.js 24 that the dependency `node`
// installs beside codehost; without that either, it stops with one line naming the Node it needs
// (src/runtime.js states it). Installed under node_modules, its .ts files load through
// src/runtime.js's loadOwnTypeScript (Node strips no types there itself).
// Plain JavaScript with nothing newer than Node 14's syntax, so that any Node can read it.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { loadOwnTypeScript, NEEDED_NODE as NEEDED, pinnedNode, runsCodehost } from '../src/runtime.js';

const args = process.argv.slice(2);

if (runsCodehost(process.version)) {
  loadOwnTypeScript();
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
