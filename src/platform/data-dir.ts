// The data directory, and Node's compile cache kept in it. What codehost writes there (the database,
// which may hold the generated secret key; archives; git data, also through git) is for its own user
// only: the directory 0700, its files 0600. The compile cache (`compile-cache`; NODE_COMPILE_CACHE
// overrides it) holds the export thread's modules compiled (src/areas/user-migrations/export-thread.ts),
// so that a later thread, also after a restart, loads them compiled; it lives in the data directory,
// which only the server writes, not in a shared temporary directory, where another local user could
// plant compiled code. A cache that cannot be enabled (an unwritable directory) only leaves the
// modules compiled as before. The server itself does not keep one: writing it would hold up a new data
// directory's first start (0.2–1.9 s measured under load), which the test double's users pay on every
// start, for the export thread's first load only.
import { mkdirSync } from 'node:fs';
import { enableCompileCache } from 'node:module';
import { join } from 'node:path';

/** Makes the data directory (0700) if missing, and this process's files its user's only. */
export function makeDataDir(dataDir: string): void {
  process.umask(0o077);
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
}

/** Enables Node's compile cache in the data directory for the modules this thread loads from now on. */
export function enableCompileCacheIn(dataDir: string): void {
  enableCompileCache(process.env.NODE_COMPILE_CACHE || join(dataDir, 'compile-cache'));
}
