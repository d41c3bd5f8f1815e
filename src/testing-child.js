// `codehost/testing/child` (package.json): startCodehost() with the server in a child process on
// codehost's pinned Node.js 24 (the dependency `node`, found as bin/codehost.js finds it), for a
// suite on any Node 18+ and any test runner. The child (src/testing-child-server.js) runs the
// in-process helper itself, so the settings (free port, temporary data directory, admin token, test
// clock, test mode, demo or seed, PostgreSQL) are the same, and every member it has is here: its
// values copied, its calls passed over the IPC channel. Plain JavaScript, Node 14's syntax at most.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { NEEDED_NODE, pinnedNode, runsCodehost } from './runtime.js';

const SERVER = fileURLToPath(new URL('./testing-child-server.js', import.meta.url));
const READY_MS = 120000;
const STOP_MS = 10000;

/** The Node that runs the child: the pinned one, else this one when it runs codehost. */
function childNode() {
  const node = pinnedNode() || (runsCodehost(process.version) ? process.execPath : null);
  if (!node) {
    throw new Error(`codehost/testing/child runs the server on codehost's pinned Node.js 24 (the package \`node\`, a dependency of codehost), which is not installed, and this Node.js ${process.version} cannot run it (it needs ${NEEDED_NODE}): reinstall codehost with its dependencies (\`npm install\`, install scripts allowed)`);
  }
  return node;
}

/** Starts codehost in a child process; the same options and members as `codehost/testing`'s startCodehost. */
export function startCodehost(options = {}) {
  let node;
  try {
    node = childNode();
  } catch (error) {
    return Promise.reject(error);
  }
  const child = spawn(node, [SERVER], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'], env: process.env });
  const pending = new Map();
  let nextId = 1;
  let exited = null;
  // The channel keeps this process alive only while a call waits: a suite that forgets stop() ends,
  // and the child, its channel closed, stops itself.
  const hold = () => (pending.size ? child.channel && child.channel.ref() : child.channel && child.channel.unref());

  const exitedPromise = new Promise((resolve) => child.on('exit', (code, signal) => {
    exited = signal || code;
    for (const [, call] of pending) call.reject(new Error(`codehost: the server's child process ended (${exited}) before it answered ${call.member}`));
    pending.clear();
    resolve();
  }));

  const call = (member, args) => new Promise((resolve, reject) => {
    if (exited !== null) return reject(new Error(`codehost: the server's child process has ended (${exited}); ${member} was not sent`));
    const id = nextId++;
    pending.set(id, { resolve, reject, member });
    hold();
    child.send({ id, member, args });
  });

  child.on('message', (message) => {
    const waiting = pending.get(message.id);
    if (!waiting) return;
    pending.delete(message.id);
    hold();
    if (message.error !== undefined) waiting.reject(new Error(message.error));
    else waiting.resolve(message.value);
  });

  const stop = async () => {
    if (exited === null) {
      child.channel && child.channel.ref();
      const timer = setTimeout(() => child.kill('SIGKILL'), STOP_MS);
      // The child stops the server (and removes its temporary directory or drops its database) when its channel closes.
      child.disconnect();
      await exitedPromise;
      clearTimeout(timer);
    }
  };

  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`codehost: the server's child process was not ready within ${READY_MS / 1000} s`));
    }, READY_MS);
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(new Error(`codehost: cannot start the server's child process (${error.code || error.message})`));
    });
    call('start', [options]).then((members) => {
      clearTimeout(timer);
      child.unref();
      const codehost = { ...members.values };
      for (const member of members.calls) codehost[member] = (...args) => call(member, args);
      codehost.stop = stop;
      resolve(codehost);
    }, (error) => {
      clearTimeout(timer);
      stop().then(() => reject(error), () => reject(error));
    });
  });
}
