// The examples of docs/clients.md, as the tests run them: each fenced block is tagged after its
// language (```js octokit-retry). The JavaScript and Python ones read the server's address from
// CODEHOST_URL and run as written (the test sets it); the browser page, which reads no environment,
// names http://127.0.0.1:3000, which the test replaces with its own address.
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { ADMIN_TOKEN, type TestServer } from '../helpers/server.ts';

const DOC = new URL('../../docs/clients.md', import.meta.url);

/** The fenced blocks of docs/clients.md: language, tag and code. */
export function docBlocks(): { lang: string; name: string; code: string }[] {
  const text = readFileSync(DOC, 'utf8');
  return [...text.matchAll(/^```([\w-]+) ([\w-]+)\n([\s\S]*?)^```$/gm)].map((match) => ({ lang: match[1]!, name: match[2]!, code: match[3]! }));
}

/** The code of the block tagged `name`, as written; with `baseUrl` (the browser page), pointed there. */
export function docExample(name: string, baseUrl?: string): string {
  const blocks = docBlocks().filter((block) => block.name === name);
  if (blocks.length !== 1) throw new Error(`docs/clients.md has ${blocks.length} blocks tagged ${name}`);
  return baseUrl === undefined ? blocks[0]!.code : blocks[0]!.code.replaceAll('http://127.0.0.1:3000', baseUrl);
}

/** The demo data's classic token of mona (docs/clients.md's examples use it). */
export const MONA_TOKEN = 'chp_DemoMonaClassicToken00000000013Mkcu6';

const ROOT = new URL('../..', import.meta.url).pathname;

/**
 * Runs a JavaScript example of docs/clients.md (an ES module) as written, from the repository root
 * (where its packages resolve), with CODEHOST_URL naming `server` and its admin token beside it.
 */
export async function runExample(name: string, server: TestServer): Promise<string> {
  const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', docExample(name)], {
    cwd: ROOT,
    env: { PATH: process.env.PATH, CODEHOST_URL: server.url, CODEHOST_ADMIN_TOKEN: ADMIN_TOKEN },
    timeout: 60_000,
  });
  return stdout;
}
