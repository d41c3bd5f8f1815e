// `codehost/testing` (package.json): startCodehost() runs the server in the test's own process
// (src/testing-helper.ts), which needs the Node that runs codehost (src/runtime.js). On an older
// one this module stops at import with one line: the Node found, the Node needed, and the way out,
// `codehost/testing/child` (src/testing-child.js), the same helper with the server in a child
// process on codehost's pinned Node.js 24. Plain JavaScript, so that any Node can read this much.
import { loadOwnTypeScript, NEEDED_NODE, runsCodehost } from './runtime.js';

if (!runsCodehost(process.version)) {
  const message = `codehost/testing runs the server in this process, which needs ${NEEDED_NODE}; this is Node.js ${process.version}. ` +
    "Run your tests on Node.js 24, or import { startCodehost } from 'codehost/testing/child' (the same helper, the server in a child process on codehost's pinned Node.js 24; any Node 18+, any test runner)";
  const error = new Error(message);
  error.code = 'CODEHOST_NODE_TOO_OLD';
  error.stack = `Error: ${message}`;
  throw error;
}
loadOwnTypeScript();

export const { startCodehost } = await import('./testing-helper.ts');
