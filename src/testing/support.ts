// Test support (spec/admin-api.md "Test support"): POST /_admin/reset and named snapshots of the
// whole state: database rows and queued jobs (src/db/snapshots.ts), git data and migration archives
// (files in the data directory), and what lives in this process's memory (the test clock, fault
// rules, rate-limit leases, cached apps; not the request journal, which outlives them). A reset or restore runs alone behind
// the gate (gate.ts): requests and background jobs in flight finish first, new ones wait
// and then see the new state, so none sees a mix. Registered outside production mode only (plugin.ts).
import { randomUUID } from 'node:crypto';
import { cpSync, existsSync, lstatSync, mkdirSync, readdirSync, renameSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { join } from 'node:path';
import type { onRequestHookHandler } from 'fastify';
import { Type } from 'typebox';
import { parse } from 'yaml';
import type { Area } from '../core/area.ts';
import { stateTables, type SnapshotMeta, type StateTables } from '../db/snapshots.ts';
import type { Api, Context } from '../platform/context.ts';
import { invalidField, notFound, validationFailed } from '../platform/errors.ts';
import { faultsOf, type FaultRule } from './fault-store.ts';
import { gateOf } from './gate.ts';
import { journalOf } from './journal.ts';
import { loadSeed, loadSeedFile } from '../admin/seed.ts';

const hidden = { hide: true, tags: ['admin'] } as const;

const DEMO_SEED = new URL('../admin/demo.yaml', import.meta.url);
/** The demo world, saved the first time a reset asks for it: later resets restore it. Not a valid snapshot name, so never listed. */
const DEMO_SNAPSHOT = '.demo';
/** Folders in the data directory being removed in the background (test-support's own). */
const DISCARDED = '.discarded-test-state-';
/** The data directory's folders that are state: bare git repositories, migration archives. */
const FILE_STATE = ['git', 'migration-archives'];

/**
 * What a folder of file state holds, as its files' names, sizes, inodes and change times: equal
 * fingerprints, the same files (a file written or replaced gets a new change time). `absent` when
 * there is no folder.
 */
async function fingerprint(dir: string): Promise<string> {
  if (!existsSync(dir)) return 'absent';
  const parts: string[] = [];
  const turns = new Turns();
  const walk = (at: string, prefix: string) => {
    for (const entry of sorted(at)) {
      const path = join(at, entry.name);
      const stat = lstatSync(path, { bigint: true });
      parts.push(`${prefix}${entry.name} ${stat.mode} ${stat.size} ${stat.ino} ${stat.mtimeNs} ${stat.ctimeNs}`);
      if (entry.isDirectory()) walk(path, `${prefix}${entry.name}/`);
    }
  };
  // One top-level entry (a repository's git data) at a time, the event loop served in between.
  for (const entry of sorted(dir)) {
    const path = join(dir, entry.name);
    const stat = lstatSync(path, { bigint: true });
    parts.push(`${entry.name} ${stat.mode} ${stat.size} ${stat.ino} ${stat.mtimeNs} ${stat.ctimeNs}`);
    if (entry.isDirectory()) walk(path, `${entry.name}/`);
    await turns.maybe();
  }
  return parts.join('\n');
}

const sorted = (dir: string) => readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1));

/**
 * Long file work done synchronously (a few hundred small files copy several times faster than
 * through the thread pool one by one) in slices: after each slice of ~20 ms the event loop gets a
 * turn, so what does not wait at the gate (/healthz) answers meanwhile. Thousands of repositories'
 * files blocked it for a minute before.
 */
class Turns {
  #since = performance.now();
  async maybe(): Promise<void> {
    if (performance.now() - this.#since < 20) return;
    await nextTurn();
    this.#since = performance.now();
  }
}

/** Copies the folder `from` to `to`, one top-level entry at a time (see Turns). */
async function copyFolder(from: string, to: string): Promise<void> {
  mkdirSync(to, { recursive: true });
  const turns = new Turns();
  for (const entry of readdirSync(from)) {
    cpSync(join(from, entry), join(to, entry), { recursive: true });
    await turns.maybe();
  }
}

/** What a snapshot keeps of this process's memory. */
export interface MemoryState {
  clock_offset_ms: number;
  faults: FaultRule[];
}

/** This process's memory as a snapshot keeps it: the clock's lead, the fault rules. */
export function memoryOf(ctx: Pick<Context, 'clock' | 'perServer'>): MemoryState {
  // Not the journal: it outlives resets and restores (a whole suite's calls), cleared by DELETE /_admin/requests only.
  return { clock_offset_ms: ctx.clock.offset, faults: faultsOf(ctx as Context).save() };
}

/**
 * Puts a snapshot's memory back (a reset's: no lead, no faults): the clock's lead replaced, the fault
 * rules, the rate-limit counters forgotten, and what is kept by stored version made for the world
 * before no more (`ChangeFeed.world`).
 */
export function setMemory(ctx: Pick<Context, 'clock' | 'perServer' | 'rateLimiter' | 'db'>, memory: MemoryState): void {
  ctx.clock.setOffset(memory.clock_offset_ms);
  faultsOf(ctx as Context).replace(memory.faults);
  ctx.rateLimiter.forget();
  ctx.db.feed.replaced();
}

/** The journal outlives a reset or a restore unless the call asks for it to be cleared too. */
const JournalChoice = Type.Optional(Type.Union([Type.Literal('keep'), Type.Literal('clear')]));

export const SnapshotName = Type.String({ pattern: '^[a-z0-9_-]{1,64}$' });

export class TestSupport {
  readonly #ctx: Context;
  readonly #areas: readonly Area[];
  readonly #tables: StateTables;
  readonly #dir: string;
  #demoSaved = false;
  /**
   * The file state folders known to hold what a snapshot holds: the snapshot's name and the folder's
   * fingerprint then. A restore of that snapshot leaves a folder whose fingerprint is unchanged as
   * it is instead of copying it again (the copy was most of a reset to the demo world).
   */
  readonly #filesAsSaved = new Map<string, { snapshot: string; fingerprint: string }>();

  constructor(ctx: Context, areas: readonly Area[]) {
    this.#ctx = ctx;
    this.#areas = areas;
    this.#dir = join(ctx.config.dataDir, 'snapshots');
    this.#tables = stateTables(ctx.db, this.#dir);
    // What discards a killed process left.
    if (existsSync(ctx.config.dataDir)) {
      for (const name of readdirSync(ctx.config.dataDir)) {
        if (name.startsWith(DISCARDED)) rm(join(ctx.config.dataDir, name), { recursive: true, force: true }).catch(() => {});
      }
    }
  }

  /** Empties the world, then loads the demo data or a seed (parsed YAML or JSON). */
  async reset(to: 'empty' | 'demo' | 'seed', seed?: unknown): Promise<number> {
    const started = performance.now();
    await gateOf(this.#ctx).exclusive(async () => {
      if (to === 'demo' && this.#demoSaved) {
        await this.#restoreAlone(DEMO_SNAPSHOT);
        return;
      }
      if (to === 'seed') {
        await this.#resetToSeed(seed);
        return;
      }
      await this.#tables.empty();
      for (const dir of FILE_STATE) this.#discard(join(this.#ctx.config.dataDir, dir));
      this.#filesAsSaved.clear();
      this.#setMemory({ clock_offset_ms: 0, faults: [] });
      if (to === 'demo') {
        await loadSeedFile(this.#ctx, this.#areas, DEMO_SEED.pathname);
        await this.#saveAlone(DEMO_SNAPSHOT);
        this.#demoSaved = true;
      }
    });
    return Math.round(performance.now() - started);
  }

  /**
   * All or nothing: the rows are emptied in the seed's own transaction, the file state is moved
   * aside (not removed) until it has committed, and the memory is put back when it fails, so a seed
   * that fails (an entry referring to nothing) answers its error with the world as it was.
   */
  async #resetToSeed(seed: unknown): Promise<void> {
    const data = this.#ctx.config.dataDir;
    const moved = FILE_STATE.map((dir) => ({ dir: join(data, dir), aside: join(data, `.${dir}.before-reset`) }));
    const memory = this.#memory();
    for (const { dir, aside } of moved) {
      this.#discard(aside);
      if (existsSync(dir)) renameSync(dir, aside);
    }
    this.#setMemory({ clock_offset_ms: 0, faults: [] });
    let undo = async () => {};
    try {
      await loadSeed(this.#ctx, this.#areas, seed, async (trx) => {
        undo = await this.#tables.emptyIn(trx);
      });
    } catch (error) {
      await undo();
      for (const { dir, aside } of moved) {
        this.#discard(dir);
        if (existsSync(aside)) renameSync(aside, dir);
      }
      this.#setMemory(memory);
      throw error;
    }
    for (const { aside } of moved) this.#discard(aside);
    this.#filesAsSaved.clear();
  }

  async save(name: string): Promise<SnapshotMeta> {
    return gateOf(this.#ctx).exclusive(async () => {
      if (await this.#tables.exists(name)) throw validationFailed([{ resource: 'Snapshot', field: 'name', code: 'already_exists' }]);
      return this.#saveAlone(name);
    });
  }

  /** The time it took; null when there is no such snapshot. */
  async restore(name: string): Promise<number | null> {
    const started = performance.now();
    const found = await gateOf(this.#ctx).exclusive(() => this.#restoreAlone(name));
    return found ? Math.round(performance.now() - started) : null;
  }

  async list(): Promise<SnapshotMeta[]> {
    return listedSnapshots(await this.#tables.list());
  }

  async drop(name: string): Promise<boolean> {
    return gateOf(this.#ctx).exclusive(async () => {
      const dropped = await this.#tables.drop(name);
      this.#discard(this.#filesOf(name));
      // A snapshot made later under the same name may hold other files.
      for (const [dir, known] of this.#filesAsSaved) if (known.snapshot === name) this.#filesAsSaved.delete(dir);
      return dropped;
    });
  }

  #filesOf(name: string): string {
    return join(this.#dir, `${name}.files`);
  }

  async #saveAlone(name: string): Promise<SnapshotMeta> {
    const createdAt = this.#ctx.clock.now().toISOString();
    const files = this.#filesOf(name);
    // Requests wait at the gate meanwhile; what does not hold it (/healthz) answers (copyFolder).
    this.#discard(files);
    for (const dir of FILE_STATE) {
      const from = join(this.#ctx.config.dataDir, dir);
      if (existsSync(from)) await copyFolder(from, join(files, dir));
      this.#filesAsSaved.set(dir, { snapshot: name, fingerprint: await fingerprint(from) });
    }
    const bytes = await this.#tables.save(name, createdAt, JSON.stringify(this.#memory()));
    return { name, createdAt, state: '', bytes };
  }

  async #restoreAlone(name: string): Promise<boolean> {
    const meta = await this.#tables.restore(name);
    if (!meta) return false;
    const files = this.#filesOf(name);
    for (const dir of FILE_STATE) {
      const to = join(this.#ctx.config.dataDir, dir);
      const known = this.#filesAsSaved.get(dir);
      if (known?.snapshot === name && known.fingerprint === (await fingerprint(to))) continue;
      this.#discard(to);
      if (existsSync(join(files, dir))) await copyFolder(join(files, dir), to);
      this.#filesAsSaved.set(dir, { snapshot: name, fingerprint: await fingerprint(to) });
    }
    this.#setMemory(JSON.parse(meta.state) as MemoryState);
    return true;
  }

  /**
   * Takes a folder out of the way at once (a rename), and removes it in the background: removing
   * thousands of repositories' files took minutes on a slow disk, all of it blocking before. What a
   * process killed meanwhile left is removed at the next start (the constructor).
   */
  #discard(path: string): void {
    if (!existsSync(path)) return;
    const trash = join(this.#ctx.config.dataDir, `${DISCARDED}${randomUUID()}`);
    renameSync(path, trash);
    rm(trash, { recursive: true, force: true, maxRetries: 2 }).catch((err: unknown) => this.#ctx.log.warn({ err, path: trash }, 'could not remove discarded test state files'));
  }

  #memory(): MemoryState {
    return memoryOf(this.#ctx);
  }

  #setMemory(memory: MemoryState): void {
    setMemory(this.#ctx, memory);
  }
}

/** The snapshots a list shows: the saved demo world left out, newest first, then by name. */
export function listedSnapshots(all: readonly SnapshotMeta[]): SnapshotMeta[] {
  return all.filter((meta) => meta.name !== DEMO_SNAPSHOT).sort((a, b) => b.createdAt.localeCompare(a.createdAt) || a.name.localeCompare(b.name));
}

/** What a reset's body asks for: empty unless it says, a seed only with `to: seed` (parsed YAML or JSON), each refusal a 422 naming `seed`. */
export function resetRequest(body: { to?: 'empty' | 'demo' | 'seed'; seed?: string }): { to: 'empty' | 'demo' | 'seed'; seed: unknown } {
  const to = body.to ?? 'empty';
  let seed: unknown;
  if (to === 'seed') {
    if (body.seed === undefined) throw invalidField('Reset', 'seed', 'to: seed needs the seed file\'s content in seed', 'missing_field');
    try {
      seed = parse(body.seed);
    } catch (error) {
      throw invalidField('Reset', 'seed', `the seed is neither YAML nor JSON: ${(error as Error).message.split('\n')[0]}`);
    }
  } else if (body.seed !== undefined) {
    throw invalidField('Reset', 'seed', 'seed goes with to: seed');
  }
  return { to, seed };
}

const snapshotBody = (meta: SnapshotMeta) => ({ name: meta.name, created_at: meta.createdAt, bytes: meta.bytes });

/**
 * The test support routes. Reset and the snapshots' writes take the gate alone (`app`: a scope the
 * gate's request hook does not hold); the list of snapshots is read in `gated`, held shared as any
 * other request.
 */
export function testSupportRoutes(app: Api, ctx: Context, areas: readonly Area[], gated: Api): void {
  const support = new TestSupport(ctx, areas);

  app.post('/_admin/reset', {
    schema: {
      ...hidden,
      body: Type.Object({
        to: Type.Optional(Type.Union([Type.Literal('empty'), Type.Literal('demo'), Type.Literal('seed')])),
        seed: Type.Optional(Type.String({ maxLength: 5 * 1024 * 1024 })),
        journal: JournalChoice,
      }, { additionalProperties: false }),
    },
  }, async (request) => {
    const { to, seed } = resetRequest(request.body);
    const took = await support.reset(to, seed);
    if (request.body.journal === 'clear') journalOf(ctx).clear();
    return { took_ms: took };
  });

  app.post('/_admin/snapshots', {
    schema: { ...hidden, body: Type.Object({ name: SnapshotName }, { additionalProperties: false }) },
  }, async (request, reply) => {
    return reply.code(201).send(snapshotBody(await support.save(request.body.name)));
  });

  gated.get('/_admin/snapshots', { schema: hidden }, async () => {
    return (await support.list()).map(snapshotBody);
  });

  app.post('/_admin/snapshots/:name/restore', {
    schema: { ...hidden, params: Type.Object({ name: SnapshotName }), body: Type.Optional(Type.Object({ journal: JournalChoice }, { additionalProperties: false })) },
  }, async (request) => {
    const took = await support.restore(request.params.name);
    if (took === null) throw notFound(`No snapshot ${request.params.name}`);
    if (request.body?.journal === 'clear') journalOf(ctx).clear();
    return { took_ms: took };
  });

  app.delete('/_admin/snapshots/:name', {
    schema: { ...hidden, params: Type.Object({ name: SnapshotName }) },
  }, async (request, reply) => {
    if (!(await support.drop(request.params.name))) throw notFound(`No snapshot ${request.params.name}`);
    return reply.code(204).send();
  });
}

/**
 * The gate's request hook, held shared for every request of a gated scope (the routes that take the
 * gate alone, and the jobs drain, which waits on jobs that hold it, are in no gated scope). Not
 * async: entering is synchronous but during a reset or restore, and a request pays for no promise.
 * Left when the answer is done or the connection is gone: a response emits `close` for both (after
 * `finish` when the answer was sent).
 */
export function gateEntry(ctx: Context): onRequestHookHandler {
  const gate = gateOf(ctx);
  return (request, reply, done) => {
    const entered = gate.tryEnter();
    if (entered) {
      reply.raw.once('close', entered);
      return done();
    }
    // A client that gives up while it waits has its `close` now, before it enters: heard from the
    // start, it leaves as soon as it has entered (and its handler never runs), or its place would
    // be held for good and the next reset or snapshot would wait forever.
    let gone = false;
    const giveUp = () => (gone = true);
    reply.raw.once('close', giveUp);
    gate.enter().then((leave) => {
      reply.raw.off('close', giveUp);
      if (gone) return leave();
      reply.raw.once('close', leave);
      done();
    }, done);
  };
}
