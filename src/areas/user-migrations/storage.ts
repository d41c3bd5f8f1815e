// Archive storage: where finished migration archives live. The interface is what an object store
// offers (put a stream under a key, read a byte range, delete), so S3-like storage can replace the
// directory under the data directory that is the default.
import { randomUUID } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, readdir, rename, rm, stat } from 'node:fs/promises';
import { dirname, join, relative, sep } from 'node:path';
import type { Readable, Writable } from 'node:stream';
import type { Config } from '../../config.ts';

/** An archive being written: nothing is visible under its key until `commit`. */
export interface ArchiveUpload {
  stream: Writable;
  /** Publishes the finished object under its key (after `stream` has finished); returns its size in bytes. */
  commit(): Promise<number>;
  /** Drops what was written. */
  abort(): Promise<void>;
}

/** An upload that was neither committed nor aborted: its writer died (or is still writing). */
export interface UnfinishedUpload {
  /** The key it was being written for. */
  key: string;
  /** Which upload of that key (the storage's own name for it). */
  upload: string;
}

export interface ArchiveStorage {
  create(key: string): Promise<ArchiveUpload>;
  /** The object's size in bytes, or null when there is no such object. */
  size(key: string): Promise<number | null>;
  /** The object's bytes, or the inclusive byte range `start`..`end` of them. */
  read(key: string, range?: { start: number; end: number }): Readable;
  remove(key: string): Promise<void>;
  /** Removes every object under a folder (`prefix` ends with `/`), finished or not. */
  clear(prefix: string): Promise<void>;
  /** The folders at the top (each a migration's: `<id>/`). */
  folders(): Promise<string[]>;
  /** The unfinished uploads last written to before `before`. */
  unfinished(before: Date): Promise<UnfinishedUpload[]>;
  /** Removes an unfinished upload (gone already is fine). */
  removeUnfinished(upload: UnfinishedUpload): Promise<void>;
}

/** `<key>.<uuid>.partial`: an upload being written, renamed to its key by `commit`. */
const PARTIAL = /^(.+)\.[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\.partial$/;

const KEY_PATTERN = /^[A-Za-z0-9_-]+(?:\/[A-Za-z0-9_.-]+)*\/?$/;

/** Archive storage in a local directory: written under a temporary name, renamed into place when complete. */
export class DirectoryStorage implements ArchiveStorage {
  private readonly root: string;

  constructor(root: string) {
    this.root = root;
  }

  private path(key: string): string {
    if (!KEY_PATTERN.test(key) || key.split('/').some((part) => part === '.' || part === '..')) throw new Error(`invalid storage key: ${key}`);
    return join(this.root, key);
  }

  async create(key: string): Promise<ArchiveUpload> {
    const target = this.path(key);
    await mkdir(dirname(target), { recursive: true });
    const partial = `${target}.${randomUUID()}.partial`;
    // `flush` syncs the data to disk before close, so a renamed archive is a complete one.
    const stream = createWriteStream(partial, { flags: 'wx', flush: true });
    return {
      stream,
      commit: async () => {
        await rename(partial, target);
        return (await stat(target)).size;
      },
      abort: async () => {
        stream.destroy();
        await rm(partial, { force: true });
      },
    };
  }

  async size(key: string): Promise<number | null> {
    try {
      const info = await stat(this.path(key));
      return info.isFile() ? info.size : null;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw error;
    }
  }

  read(key: string, range?: { start: number; end: number }): Readable {
    return createReadStream(this.path(key), range ? { start: range.start, end: range.end } : {});
  }

  async remove(key: string): Promise<void> {
    await rm(this.path(key), { force: true });
  }

  async clear(prefix: string): Promise<void> {
    if (!prefix.endsWith('/')) throw new Error(`not a folder: ${prefix}`);
    await rm(this.path(prefix), { recursive: true, force: true });
  }

  async folders(): Promise<string[]> {
    try {
      const entries = await readdir(this.root, { withFileTypes: true });
      return entries.filter((entry) => entry.isDirectory()).map((entry) => `${entry.name}/`);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw error;
    }
  }

  async unfinished(before: Date): Promise<UnfinishedUpload[]> {
    let names: string[];
    try {
      names = await readdir(this.root, { recursive: true, encoding: 'utf8' });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw error;
    }
    const found: UnfinishedUpload[] = [];
    for (const name of names) {
      const key = PARTIAL.exec(name)?.[1]?.split(sep).join('/');
      if (!key || !KEY_PATTERN.test(key)) continue;
      const info = await stat(join(this.root, name)).catch(() => null);
      if (info?.isFile() && info.mtime < before) found.push({ key, upload: name });
    }
    return found;
  }

  async removeUnfinished(upload: UnfinishedUpload): Promise<void> {
    const path = join(this.root, upload.upload);
    // Only a partial file under the root, never anything a forged name points elsewhere.
    if (!PARTIAL.test(upload.upload) || relative(this.root, path).startsWith('..')) throw new Error('not an unfinished upload');
    await rm(path, { force: true });
  }
}

/** Archive storage for the configuration (the one place that picks it; the export thread calls it too): a directory under the data directory. */
export function archiveStorage(config: Pick<Config, 'dataDir'>): ArchiveStorage {
  return new DirectoryStorage(join(config.dataDir, 'migration-archives'));
}
