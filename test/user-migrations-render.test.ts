// The export renders its records on two threads (src/areas/user-migrations/render.ts): the chunks
// must come back in the jobs' order with the same bytes as rendering them all on one thread, and a
// render thread that fails must fail the export rather than leave it waiting.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { RecordWriter } from '../src/areas/user-migrations/records.ts';
import { Renderers, renderChunk, type Chunk, type RenderJob } from '../src/areas/user-migrations/render.ts';

const urls = { api: 'http://127.0.0.1:3000/api/v3', web: 'http://127.0.0.1:3000' };
const dataDir = mkdtempSync(join(tmpdir(), 'codehost-render-'));
after(() => rmSync(dataDir, { recursive: true, force: true }));

const at = new RecordWriter(urls, 1).repositoryPaths('mona', 'hello');
const author = (id: number) => ({ id, login: `user-${id}`, type: 'User', site_admin: 0 });

/** Jobs of comments of different sizes, with bodies that need escaping and non-ASCII text. */
function jobs(count: number): RenderJob[] {
  let id = 0;
  return Array.from({ length: count }, (_, j) => ({
    kind: 'issue_comments' as const,
    at,
    items: Array.from({ length: 1 + ((j * 7) % 23) }, () => {
      id += 1;
      return {
        comment: { id, body: `comment ${id} "quoted" \\ é 😀 ${'x'.repeat(id % 50)}`, created_at: '2024-01-02T03:04:05.678Z', updated_at: '2024-01-02T03:04:05.678Z' },
        issue: { number: 1 + (id % 9), is_pull_request: id % 2 },
        author: author(1 + (id % 5)),
      };
    }),
  }));
}

const records = (chunk: Chunk) => Array.from(chunk.ends, (end, i) => chunk.bytes.toString('utf8', i ? chunk.ends[i - 1] : 0, end));

test('chunks rendered on both threads come back in order, with the bytes of one thread', async () => {
  const all = jobs(60);
  const expected = all.flatMap((job) => records(renderChunk(new RecordWriter(urls, 1), job)));
  // A full batch of one record: the render thread starts with the first job.
  const renderers = new Renderers({ urls, ownerId: 1, dataDir }, 1);
  const got: string[] = [];
  const append = async (chunk: Chunk) => {
    got.push(...records(chunk));
  };
  try {
    for (const job of all) await renderers.add(job, append);
    await renderers.drain(append);
  } finally {
    await renderers.close();
  }
  assert.equal(got.length, expected.length);
  assert.deepEqual(got, expected);
  for (const json of got) JSON.parse(json);
});

test('small exports never start the render thread', async () => {
  const renderers = new Renderers({ urls, ownerId: 1, dataDir }, 500);
  const got: string[] = [];
  for (const job of jobs(5)) await renderers.add(job, async (chunk) => void got.push(...records(chunk)));
  await renderers.drain(async (chunk) => void got.push(...records(chunk)));
  assert.equal((renderers as unknown as { thread: unknown }).thread, null);
  assert.equal(got.length, jobs(5).reduce((n, job) => n + job.items.length, 0));
  await renderers.close();
});

test('a render thread that fails fails the export instead of leaving it waiting', async () => {
  const renderers = new Renderers({ urls, ownerId: 1, dataDir }, 1);
  // A comment without its author: rendering it throws on whichever thread takes it.
  const broken = { kind: 'issue_comments', at, items: [{ comment: { id: 1, body: '', created_at: '', updated_at: '' }, issue: { number: 1, is_pull_request: 0 }, author: null }] };
  try {
    // The first job goes to the render thread (it has none under way); its failure surfaces when
    // its chunk is awaited.
    await renderers.add(broken as unknown as RenderJob, async () => {});
    await assert.rejects(renderers.drain(async () => {}), /null|author|exit code/);
    // Later jobs fail at once, not by waiting for a thread that is gone.
    await assert.rejects(async () => {
      for (let i = 0; i < 5; i++) await renderers.add(jobs(1)[0]!, async () => {});
      await renderers.drain(async () => {});
    });
  } finally {
    await renderers.close();
  }
});
