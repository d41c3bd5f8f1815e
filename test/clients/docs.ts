// The examples of docs/clients.md, as the tests run them: each fenced block is tagged after its
// language (```js octokit-retry), and names the server as http://127.0.0.1:3000, which the test
// replaces with its own address.
import { readFileSync } from 'node:fs';

const DOC = new URL('../../docs/clients.md', import.meta.url);

/** The code of the block tagged `name`, pointed at `baseUrl` (http://127.0.0.1:PORT). */
export function docExample(name: string, baseUrl: string): string {
  const text = readFileSync(DOC, 'utf8');
  const blocks = [...text.matchAll(/^```[\w-]+ ([\w-]+)\n([\s\S]*?)^```$/gm)].filter((match) => match[1] === name);
  if (blocks.length !== 1) throw new Error(`docs/clients.md has ${blocks.length} blocks tagged ${name}`);
  return blocks[0]![2]!.replaceAll('http://127.0.0.1:3000', baseUrl);
}

/** The demo data's classic token of mona (docs/clients.md's examples use it). */
export const MONA_TOKEN = 'chp_DemoMonaClassicToken00000000013Mkcu6';
