// The Node.js that runs codehost, stated once: bin/codehost.js (the command), src/testing-entry.js
// (`codehost/testing`, the server in the test's process) and src/testing-child.js
// (`codehost/testing/child`, the server in a child process) read it from here.
// Plain JavaScript with nothing newer than Node 14's syntax, so that any Node can read it.
import { existsSync, readFileSync } from 'node:fs';
import module, { createRequire } from 'node:module';
import { dirname, join, sep } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

/**
 * codehost runs its TypeScript source directly (types stripped without a flag: 22.18+, 23.6+, 24)
 * and keeps its embedded database with node:sqlite (without a flag from 22.13): both hold from 22.18.
 */
export const NEEDED_NODE = 'Node.js 22.18 or later (24 is the line codehost pins and tests)';

/** Whether a Node of this version (`process.version`) runs codehost: 22.18+, 23.6+, 24+. */
export function runsCodehost(version) {
  const [major, minor] = version.replace(/^v/, '').split('.').map(Number);
  return major >= 24 || (major === 23 && minor >= 6) || (major === 22 && minor >= 18);
}

/** The binary of the pinned runtime (the dependency `node`, Node.js 24), wherever npm put it, or null. */
export function pinnedNode() {
  try {
    const bin = join(dirname(createRequire(import.meta.url).resolve('node/package.json')), 'bin', 'node');
    return existsSync(bin) ? bin : null;
  } catch {
    return null;
  }
}

const ROOT = pathToFileURL(join(dirname(fileURLToPath(import.meta.url)), '..') + sep).href;
let hooked = false;

/**
 * Node strips types of no file under node_modules (ERR_UNSUPPORTED_NODE_MODULES_TYPE_STRIPPING),
 * which is where `npm install codehost` puts codehost. When it is there, this loads codehost's own
 * .ts files (and no one else's) with their types stripped, as Node does elsewhere. Call it before
 * the first import of a .ts file; from a checkout (or a path dependency, a link) it does nothing.
 */
export function loadOwnTypeScript() {
  if (hooked || !ROOT.includes('/node_modules/')) return;
  hooked = true;
  module.registerHooks({
    load(url, context, nextLoad) {
      if (!url.startsWith(ROOT) || !url.endsWith('.ts') || url.slice(ROOT.length).includes('node_modules/')) return nextLoad(url, context);
      return { format: 'module', source: stripTypes(readFileSync(fileURLToPath(url), 'utf8')), shortCircuit: true };
    },
  });
}

/** Node's own stripping (positions kept, so stack traces name the right lines), without its "experimental" warning. */
function stripTypes(source) {
  const emitWarning = process.emitWarning;
  process.emitWarning = function (warning, ...rest) {
    if (!String(warning).includes('stripTypeScriptTypes')) emitWarning.call(process, warning, ...rest);
  };
  try {
    return module.stripTypeScriptTypes(source, { mode: 'strip' });
  } finally {
    process.emitWarning = emitWarning;
  }
}
