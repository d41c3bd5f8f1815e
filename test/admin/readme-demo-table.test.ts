// The README's demo table stays true: every credential in it is the demo data's (src/admin/demo.yaml),
// and the app id and private key it names sign a JWT the demo world's server takes as demo-app's
// (GET /app), on a fresh start with the demo data and after a reset to it. Both databases.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { createAppAuth } from '@octokit/auth-app';
import { parse } from 'yaml';
import { startCodehost, type Codehost } from '../../src/testing-helper.ts';

const ROOT = new URL('../..', import.meta.url).pathname;
const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
const demoText = readFileSync(join(ROOT, 'src/admin/demo.yaml'), 'utf8');
const demo = parse(demoText) as { apps: { slug: string; client_id: string; private_key: string }[] };

/** The rows of the table after "| credential | value |": [credential, value cell]. */
function demoTable(): [string, string][] {
  const start = readme.indexOf('| credential | value |');
  assert.ok(start >= 0, 'README has no demo credentials table');
  const rows = readme.slice(start).split('\n').slice(2);
  return rows.slice(0, rows.findIndex((row) => !row.startsWith('|'))).map((row) => {
    const [, credential, value] = row.split('|').map((cell) => cell.trim());
    return [credential!, value!];
  });
}

describe('the README\'s demo table', () => {
  let codehost: Codehost;
  before(async () => {
    codehost = await startCodehost({ demo: true, databaseUrl: process.env.DATABASE_URL || undefined });
  });
  after(() => codehost.stop());

  test('every credential value in it is in src/admin/demo.yaml', () => {
    const values = demoTable().flatMap(([, value]) => [...value.matchAll(/`([^`]+)`/g)].map((m) => m[1]!));
    assert.ok(values.length >= 7, JSON.stringify(values));
    for (const value of values.filter((v) => /^(ch[a-z]*_|Iv1\.|demo-client-secret)/.test(v))) {
      assert.ok(demoText.includes(value), `README's ${value} is not in src/admin/demo.yaml`);
    }
  });

  test('the app id and private key it names are demo-app\'s: their JWT is taken, after a reset to the demo world too', async () => {
    const row = demoTable().find(([credential]) => credential.startsWith('demo-app id'));
    assert.ok(row, 'README lists no demo-app id');
    const [, id, keyPlace] = /^`(\d+)` \/ the `private_key` of `([\w-]+)` in \[src\/admin\/demo\.yaml\]/.exec(row[1]) ?? [];
    assert.ok(id && keyPlace, row[1]);
    const app = demo.apps.find((a) => a.slug === keyPlace)!;
    assert.equal(app.slug, 'demo-app');
    for (const when of ['a fresh start', 'a reset to demo']) {
      if (when === 'a reset to demo') await codehost.reset('demo');
      const { token } = (await createAppAuth({ appId: Number(id), privateKey: app.private_key })({ type: 'app' })) as { token: string };
      const answer = await fetch(`${codehost.apiUrl}/app`, { headers: { authorization: `Bearer ${token}` } });
      assert.equal(answer.status, 200, when);
      const self = (await answer.json()) as { id: number; slug: string; client_id: string };
      assert.deepEqual([self.id, self.slug, self.client_id], [Number(id), 'demo-app', app.client_id], when);
    }
    // A wrong id with the key is refused: the figure is checked, not merely present.
    const { token: wrong } = (await createAppAuth({ appId: Number(id) + 1, privateKey: app.private_key })({ type: 'app' })) as { token: string };
    assert.equal((await fetch(`${codehost.apiUrl}/app`, { headers: { authorization: `Bearer ${wrong}` } })).status, 401);
  });
});
