// docs/clients.md's examples run against a server on any port: each JavaScript and Python block
// reads the address from CODEHOST_URL (http://127.0.0.1:3000 only as the default when unset) and
// names no other address, and each block is run by a test (test/testing/faults.test.ts runs the octokit
// ones with CODEHOST_URL set to a server on a free port, test/clients/pygithub.test.ts the PyGithub one,
// test/console/browser.test.ts the browser page).
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { docBlocks } from './docs.ts';

const TEST_DIR = new URL('..', import.meta.url).pathname;
const DEFAULTS: Record<string, string> = {
  js: "const CODEHOST_URL = process.env.CODEHOST_URL ?? 'http://127.0.0.1:3000';",
  python: 'CODEHOST_URL = os.environ.get("CODEHOST_URL", "http://127.0.0.1:3000")',
};

test('every JavaScript and Python example reads CODEHOST_URL and names no fixed address', () => {
  const code = docBlocks().filter((block) => block.lang in DEFAULTS);
  assert.ok(code.length >= 4, `${code.length} examples`);
  for (const block of code) {
    const line = DEFAULTS[block.lang]!;
    assert.ok(block.code.includes(line), `${block.name} reads the address from CODEHOST_URL:\n${block.code}`);
    assert.doesNotMatch(block.code.replace(line, ''), /(127\.0\.0\.1|localhost):\d+/, `${block.name} names a fixed address`);
  }
});

test('every example of docs/clients.md is run by a test', () => {
  const tests = readdirSync(TEST_DIR, { recursive: true, encoding: 'utf8' }).filter((name) => name.endsWith('.test.ts')).map((name) => readFileSync(join(TEST_DIR, name), 'utf8')).join('\n');
  for (const block of docBlocks()) {
    assert.match(tests, new RegExp(`(docExample|runExample)\\('${block.name}'`), `no test runs the block tagged ${block.name}`);
  }
});
