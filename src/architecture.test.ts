// The house map, checked: which folder may import which (CONTRIBUTING.md "Where things go"), no
// import cycles between folders, SQL only in stores (which open no transactions), the sizes of files
// and functions, and every package imported by src/ declared in package.json.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { dirname, join, normalize, relative } from 'node:path';
import { test } from 'node:test';

const root = join(import.meta.dirname, '..');

function sourceFiles(dir: string): string[] {
  return readdirSync(join(root, dir), { withFileTypes: true }).flatMap((entry) => {
    const path = `${dir}/${entry.name}`;
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts') ? [path] : [];
  });
}

/**
 * The folder a file belongs to: a whole core home (`core/<home>`; `core/area` and `core/activities`
 * for the files beside the homes), an area (`areas/<area>`), or the top folder of src/.
 */
function unit(file: string): string {
  // The codehost/testing helper starts the whole server: it sits above app.ts, which registers the
  // rest of src/testing/ (the test double).
  if (file === 'src/testing-helper.ts') return 'testing-helper';
  const parts = file.split('/');
  if (parts.length === 2) return parts[1]!.replace(/\.ts$/, '');
  if (parts[1] === 'core' || parts[1] === 'areas') return `${parts[1]}/${parts[2]!.replace(/\.ts$/, '')}`;
  return parts[1]!;
}

const layer = (name: string) => name.split('/')[0]!;

/** What each layer may import, besides itself. */
const ALLOWED: Record<string, readonly string[]> = {
  main: ['cli', 'config', 'platform'],
  // src/cli: the CLI's commands, one file each, that src/main.ts dispatches to.
  cli: ['app', 'admin', 'config', 'db', 'platform', 'core', 'jobs'],
  // src/testing-helper.ts: the testing helper (codehost/testing) starts the server as main.ts does
  // (from a migrated database template, src/db/template.ts).
  'testing-helper': ['app', 'config', 'db'],
  app: ['workers', 'testing', 'admin', 'areas', 'console', 'core', 'activity', 'http', 'platform', 'db', 'jobs', 'config'],
  // src/workers.ts: the one list of every job and sweep, above the areas that define them.
  workers: ['testing', 'areas', 'core', 'activity', 'platform', 'jobs'],
  // src/testing/: the test double (gate, faults, journal, reset and snapshots, the test clock's routes).
  testing: ['admin', 'core', 'activity', 'http', 'platform', 'db', 'jobs', 'config'],
  // src/console: static files and the routes that serve them (a page over the admin API).
  console: ['platform'],
  admin: ['core', 'activity', 'http', 'platform', 'db', 'jobs', 'config'],
  areas: ['core', 'activity', 'http', 'platform', 'db', 'jobs', 'config'],
  core: ['activity', 'http', 'platform', 'db', 'jobs', 'config'],
  activity: ['platform', 'db', 'jobs', 'config'],
  // src/http: the request pipeline (its scopes and their hooks), over the platform's conventions.
  http: ['platform', 'db', 'jobs', 'config'],
  platform: ['db', 'jobs', 'config'],
  jobs: ['db', 'config'],
  db: ['config'],
  config: [],
};

interface Edge {
  from: string;
  to: string;
  where: string;
}

function imports(): { edges: Edge[]; packages: Map<string, string> } {
  const edges: Edge[] = [];
  const packages = new Map<string, string>();
  for (const file of sourceFiles('src')) {
    const text = readFileSync(join(root, file), 'utf8');
    for (const match of text.matchAll(/(?:from|import)\s*\(?\s*['"]([^'"]+)['"]/g)) {
      const specifier = match[1]!;
      if (specifier.startsWith('.')) {
        const target = relative(root, normalize(join(root, dirname(file), specifier)));
        if (unit(target) !== unit(file)) edges.push({ from: unit(file), to: unit(target), where: `${file} → ${specifier}` });
      } else if (!specifier.startsWith('node:') && !builtinModules.includes(specifier)) {
        const name = specifier.startsWith('@') ? specifier.split('/').slice(0, 2).join('/') : specifier.split('/')[0]!;
        packages.set(name, file);
      }
    }
  }
  return { edges, packages };
}

/**
 * The core homes from the ground up: a home imports only those below it. Access is the ground: the
 * caller, the rules and the permission tables over its own store, which every home's routes and
 * services use. `core/area` (what a home or an area plugs in) and the activity map it reads stand
 * beneath every home: the map holds every home's section and imports none of them.
 */
const CORE_FLOORS = ['core/activities', 'core/area', 'core/access', 'core/accounts', 'core/repositories', 'core/apps', 'core/issues', 'core/commits'] as const;

const floorOf = (name: string) => {
  const floor = (CORE_FLOORS as readonly string[]).indexOf(name);
  return floor < 0 ? Infinity : floor;
};

test('the core homes stack one way: activities, area, access, accounts, repositories, apps, issues, commits', () => {
  const core = imports().edges.filter((edge) => layer(edge.from) === 'core' && layer(edge.to) === 'core');
  assert.deepEqual(core.filter((edge) => !(CORE_FLOORS as readonly string[]).includes(edge.to)).map((edge) => edge.where), [], 'a core folder that is no floor');
  const wrong = core.filter((edge) => floorOf(edge.to) > floorOf(edge.from)).map((edge) => edge.where);
  assert.deepEqual(wrong, []);
});

// Access is decided in one place: outside core/access, nothing reaches past its entry (the
// principal's resolution, the rules' internals and the store's SQL stay inside). The server plugs
// in its routes (GET /rate_limit, the token sweep) as it does every home's.
test('access decisions go through the one access entry, core/access/index.ts', () => {
  const wrong = imports().edges
    .filter((edge) => edge.to === 'core/access' && edge.from !== 'core/access')
    .filter((edge) => !edge.where.endsWith('/access/index.ts') && edge.where !== 'src/app.ts → ./core/access/routes.ts')
    .map((edge) => edge.where);
  assert.deepEqual(wrong, []);
});

test('each folder imports only the layers below it', () => {
  const wrong = imports()
    .edges.filter((edge) => layer(edge.from) !== layer(edge.to) && !ALLOWED[layer(edge.from)]!.includes(layer(edge.to)))
    .map((edge) => edge.where);
  assert.deepEqual(wrong, []);
});

test('an area never imports another area', () => {
  const wrong = imports().edges.filter((edge) => layer(edge.from) === 'areas' && layer(edge.to) === 'areas').map((edge) => edge.where);
  assert.deepEqual(wrong, []);
});

test('no import cycles between folders', () => {
  const graph = new Map<string, Set<string>>();
  for (const edge of imports().edges) {
    if (!graph.has(edge.from)) graph.set(edge.from, new Set());
    graph.get(edge.from)!.add(edge.to);
  }
  const cycles: string[] = [];
  const state = new Map<string, 'open' | 'done'>();
  const visit = (node: string, path: string[]) => {
    if (state.get(node) === 'done') return;
    if (state.get(node) === 'open') {
      cycles.push([...path.slice(path.indexOf(node)), node].join(' → '));
      return;
    }
    state.set(node, 'open');
    for (const next of graph.get(node) ?? []) visit(next, [...path, node]);
    state.set(node, 'done');
  };
  for (const node of graph.keys()) visit(node, []);
  assert.deepEqual(cycles, []);
});

// SQL lives in stores: a file that builds a query is a `store.ts` (or `*-store.ts`), or belongs to
// the database layer or the queue adapters, which are storage themselves.
test('SQL only in stores', () => {
  const query = /\.(selectFrom|insertInto|updateTable|deleteFrom|replaceInto)\(|\bsql`/;
  const outside = sourceFiles('src')
    .filter((file) => !/(^|[/-])store\.ts$/.test(file) && !file.startsWith('src/db/') && !file.startsWith('src/jobs/'))
    .filter((file) => query.test(readFileSync(join(root, file), 'utf8')));
  assert.deepEqual(outside, []);
});

test('every package src/ imports is a declared dependency', () => {
  const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { dependencies: Record<string, string> };
  const undeclared = [...imports().packages].filter(([name]) => !(name in manifest.dependencies)).map(([name, file]) => `${name} (${file})`);
  assert.deepEqual(undeclared, []);
});

// One typed event path: an activity is recorded through its home's map (`ActivityRecorder<M>`,
// bound once: `const recordX: ActivityRecorder<XActivities> = recordActivity`), so its name and
// payload are checked; raw events go through `recordRawEvent`. No area hook runs after a write
// commits: what follows a change consumes its activity.
test('activities are recorded through a typed map, and consumed, never hooked after commit', () => {
  const untyped = sourceFiles('src')
    .filter((file) => !file.startsWith('src/activity/'))
    .filter((file) => /\brecordActivity\(/.test(readFileSync(join(root, file), 'utf8')));
  assert.deepEqual(untyped, []);
  const area = readFileSync(join(root, 'src/core/area.ts'), 'utf8');
  assert.doesNotMatch(area, /onRepositoryCreated/);
  // One path: access changes and an app's creation are activities too, no hook of their own.
  assert.doesNotMatch(area, /onAccessChanged|onAppCreated|onActivity\b/);
  // Consumers read `activity.payload` typed by its name, never the stored JSON.
  const parsing = sourceFiles('src')
    .filter((file) => !file.startsWith('src/activity/'))
    .filter((file) => /JSON\.parse\((row|activity)\.payload\)/.test(readFileSync(join(root, file), 'utf8')));
  // (app-webhooks/representations.ts parses a delivery's stored request body, not an activity.)
  assert.deepEqual(parsing, ['src/areas/app-webhooks/representations.ts']);
});

// Jobs are typed objects defined once (`defineJob`, src/jobs/job.ts): outside src/jobs nothing sends
// or works a queue directly (so by a name), and the retry options are written only in the definitions' home.
test('jobs are sent and worked only through their definitions', () => {
  const byName = sourceFiles('src')
    .filter((file) => !file.startsWith('src/jobs/'))
    .filter((file) => /\bqueue\.(send|sendMany|work)\s*(<[^>]*>)?\(/.test(readFileSync(join(root, file), 'utf8')));
  assert.deepEqual(byName, []);
  const retries = sourceFiles('src')
    .filter((file) => !file.startsWith('src/jobs/'))
    .filter((file) => /\bretry(Limit|DelaySeconds|Backoff)\b/.test(readFileSync(join(root, file), 'utf8')));
  // (user-migrations' export keeps a retry limit of its own, in its definition.)
  assert.deepEqual(retries, ['src/areas/user-migrations/service.ts']);
});

// One list of every job and sweep (src/workers.ts): a job defined anywhere is worked there, and no
// sweep is scheduled anywhere else.
test('every job and periodic sweep is listed in src/workers.ts', () => {
  const listed = readFileSync(join(root, 'src/workers.ts'), 'utf8');
  const unlisted = sourceFiles('src').flatMap((file) =>
    [...readFileSync(join(root, file), 'utf8').matchAll(/\bconst (\w+) = defineJob\b/g)].map((match) => match[1]!)
      .filter((job) => !new RegExp(`\\bjobWorker\\(${job},`).test(listed)).map((job) => `${job} (${file})`));
  assert.deepEqual(unlisted, []);
  const scheduled = sourceFiles('src')
    .filter((file) => !file.startsWith('src/jobs/'))
    .filter((file) => /\.every\(\s*['"`]/.test(readFileSync(join(root, file), 'utf8')));
  assert.deepEqual(scheduled, []);
});

// A service or cache of a server lives once per server (`perServer`, src/platform/per-server.ts),
// reached through its context: no module-level map keyed by the context, its URLs or its database.
// The module-level maps left are constant tables and memos of pure values, named here.
test('no module-level maps but constant tables and pure memos: per-server state is `perServer`', () => {
  const allowed = new Set([
    'src/platform/tokens.ts KIND_BY_PREFIX', // constant: token kind by prefix
    'src/core/access/access.ts IMPLIED_SCOPES', // constant: scopes implied by a scope
    'src/core/access/access.ts accepted', // the accepted-permissions header of a route's (static) rule
    'src/core/access/access.ts callerPermissions', // per request: keyed by the request's principal
    'src/core/access/principal.ts publicKeys', // an app's parsed public key, by its PEM text
    'src/db/prepared.ts preparedNames', // the prepared statement name of a query's SQL text
    'src/areas/notifications/store.ts pageQueries', // a list's reusable statement, by the shape of its filter
    'src/areas/notifications/service.ts decided', // a validator read's digest and tags, by the (never-changed) read itself
  ]);
  const found = sourceFiles('src').flatMap((file) =>
    [...readFileSync(join(root, file), 'utf8').matchAll(/^(?:export )?(?:const|let) (\w+)(?::[^=]+)? = new (?:Weak)?Map\b/gm)].map((match) => `${file} ${match[1]}`));
  assert.deepEqual(found.filter((entry) => !allowed.has(entry)), []);
});

// The writes of the shared resources live in their core homes (src/core/<resource>/writes.ts):
// the operator surface routes to them and holds no SQL, no service of its own and no store's write.
const isWriter = (path: string) => /(^|[/-])writes\.ts$/.test(path);
test('a core writer never imports another writer (they share the lookups)', () => {
  const wrong = imports().edges.filter((edge) => layer(edge.from) === 'core' && isWriter(edge.where.split(' → ')[0]!) && isWriter(edge.where.split(' → ')[1]!)).map((edge) => edge.where);
  assert.deepEqual(wrong, []);
});

test('src/admin/ writes core resources only through their core writers', () => {
  const write = /^(insert|update|upsert|delete|set|add|remove|move|detach|drop|lock|issue)[A-Z]/;
  const found = sourceFiles('src/admin').flatMap((file) => {
    const text = readFileSync(join(root, file), 'utf8');
    const wrong: string[] = [];
    if (/(^|[/-])store\.ts$/.test(file) || /\.(selectFrom|insertInto|updateTable|deleteFrom|replaceInto)\(|\bsql`/.test(text)) wrong.push(`${file}: SQL`);
    if (/\bclass \w+ extends Service\b/.test(text)) wrong.push(`${file}: a service`);
    for (const match of text.matchAll(/import\s*\{([^}]*)\}\s*from\s*'\.\.\/core\/[a-z-]+\/[a-z-]*store\.ts'/g)) {
      for (const name of match[1]!.split(',').map((n) => n.trim().replace(/^type\s+/, ''))) if (write.test(name)) wrong.push(`${file}: ${name}`);
    }
    return wrong;
  });
  assert.deepEqual(found, []);
});

// Every area says what it does on each lifecycle activity (src/core/area.ts `lifecycle`): typed as
// `LifecycleArea` (AREAS holds nothing else), each answer one line, `applied` only for a move (its
// handler of the applied `repository.moving`). An area that says nothing is a type error; one that slips by at run time fails here.
test('every area of AREAS answers every lifecycle activity, in one line each', async () => {
  const { AREAS } = await import('./app.ts');
  const { LIFECYCLE_ACTIVITIES } = await import('./core/area.ts');
  const moves = new Set(['repository.transferred', 'repository.renamed']);
  const problems: string[] = [];
  for (const area of AREAS) {
    const lifecycle = (area as { lifecycle?: Record<string, Record<string, unknown>> }).lifecycle;
    if (!lifecycle) {
      problems.push(`${area.name}: no lifecycle`);
      continue;
    }
    assert.deepEqual(Object.keys(lifecycle).sort(), [...LIFECYCLE_ACTIVITIES].sort(), `${area.name}: the lifecycle activities`);
    for (const name of LIFECYCLE_ACTIVITIES) {
      const answer = lifecycle[name]!;
      const keys = Object.keys(answer).sort();
      const why = answer.unaffected ?? answer.handled ?? answer.handler ?? answer.applied;
      if (!(keys.join() === 'unaffected' || keys.join() === 'handled' || keys.join() === 'handler' || keys.join() === 'applied')) problems.push(`${area.name} ${name}: ${keys.join()}`);
      // `handler`: the area's handler of that activity does it, so the area declares one.
      if ('handler' in answer && typeof (area.handlers as Record<string, unknown> | undefined)?.[name] !== 'function') problems.push(`${area.name} ${name}: no handler`);
      if (typeof why !== 'string' || !why.trim() || why.includes('\n')) problems.push(`${area.name} ${name}: the why is one line`);
      // `applied`: the area's handler of `repository.moving` does it, in the move's transaction.
      if ('applied' in answer && (!moves.has(name) || typeof (area.handlers as Record<string, unknown> | undefined)?.['repository.moving'] !== 'function')) problems.push(`${area.name} ${name}: applied`);
    }
  }
  assert.deepEqual(problems, []);
  // Every area folder's index is typed so, and is in AREAS.
  const folders = readdirSync(join(root, 'src/areas'), { withFileTypes: true }).filter((entry) => entry.isDirectory()).map((entry) => entry.name);
  for (const folder of folders) {
    assert.match(readFileSync(join(root, `src/areas/${folder}/index.ts`), 'utf8'), /: LifecycleArea = \{/, `src/areas/${folder}/index.ts`);
  }
  assert.deepEqual(folders.filter((folder) => !AREAS.some((area) => area.name === folder)), []);
});

// One request pipeline (src/http/): every hook of the request path is added there, in the scope it
// applies to, and no hook decides from a route's config whether it runs: the flags that did so
// (`admin`, `alone`, `ungated`) and the path sniffing that stood in for a scope are gone.
test('every addHook is in src/http/, and no route flag decides whether a hook runs', () => {
  const files = sourceFiles('src');
  const hooked = files.filter((file) => !file.startsWith('src/http/')).filter((file) => /\.addHook\(/.test(readFileSync(join(root, file), 'utf8')));
  // (src/areas/notifications/routes.ts closes its loader with the server: an onClose, no request hook.)
  assert.deepEqual(hooked.filter((file) => !/\.addHook\('onClose'/.test(readFileSync(join(root, file), 'utf8'))), []);
  const flags = files.flatMap((file) => {
    const text = readFileSync(join(root, file), 'utf8');
    return [...text.matchAll(/\b(admin|alone|ungated)\?: boolean|config: \{[^}]*\b(admin|alone|ungated): true|const \w+ = \{ (admin|alone|ungated): true|\bisAdminRequest\b/g)].map((match) => `${file}: ${match[0]}`);
  });
  assert.deepEqual(flags, []);
});

// Sizes, measured from the code (CONTRIBUTING.md "Where things go"): no source file of src/ over
// 500 lines, no function over 120. Functions are found by parsing each file (every declaration,
// expression, arrow and method, nested ones too).
const MAX_FILE_LINES = 500;
const MAX_FUNCTION_LINES = 120;

function codeFiles(dir: string): string[] {
  return readdirSync(join(root, dir), { withFileTypes: true }).flatMap((entry) => {
    const path = `${dir}/${entry.name}`;
    if (entry.isDirectory()) return codeFiles(path);
    return /\.(ts|js)$/.test(entry.name) && !/\.test\.ts$/.test(entry.name) ? [path] : [];
  });
}

interface SyntaxNode {
  type: string;
  loc?: { start: { line: number }; end: { line: number } };
  body?: unknown;
  id?: { name?: string } | null;
  key?: { name?: string };
}

/** Every function of a parsed file: its first line and its length in lines. */
function functionsOf(node: unknown, found: { line: number; lines: number; name: string }[] = [], name = '(anonymous)') {
  if (!node || typeof node !== 'object') return found;
  const n = node as SyntaxNode & Record<string, unknown>;
  if (typeof n.type !== 'string') return found;
  if (/Function|Method/.test(n.type) && n.loc && n.body) {
    found.push({ line: n.loc.start.line, lines: n.loc.end.line - n.loc.start.line + 1, name: n.id?.name ?? n.key?.name ?? name });
  }
  // A function assigned to a variable or a property is named by it.
  const named = n.type === 'VariableDeclarator' ? ((n.id as { name?: string } | null)?.name ?? name)
    : n.type === 'ObjectProperty' || n.type === 'ClassProperty' ? (n.key?.name ?? name) : name;
  for (const [key, value] of Object.entries(n)) {
    if (key === 'loc') continue;
    if (Array.isArray(value)) for (const child of value) functionsOf(child, found, named);
    else functionsOf(value, found, named);
  }
  return found;
}

test(`no file of src/ over ${MAX_FILE_LINES} lines, no function over ${MAX_FUNCTION_LINES}`, async () => {
  const { parse } = await import('@babel/parser');
  const over: string[] = [];
  for (const file of codeFiles('src')) {
    const text = readFileSync(join(root, file), 'utf8');
    const lines = text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
    if (lines > MAX_FILE_LINES) over.push(`${file}: ${lines} lines`);
    const ast = parse(text, { sourceType: 'module', plugins: file.endsWith('.ts') ? ['typescript'] : [] });
    for (const fn of functionsOf(ast.program)) {
      if (fn.lines > MAX_FUNCTION_LINES) over.push(`${file}:${fn.line} ${fn.name}: ${fn.lines} lines`);
    }
  }
  assert.deepEqual(over, []);
});

// Stores run statements; the service that calls them opens the transaction (its rules decide what
// is one unit of work), so a store's function can take part in a larger transaction.
test('stores never open transactions', () => {
  const opening = sourceFiles('src')
    .filter((file) => /(^|[/-])store\.ts$/.test(file))
    .filter((file) => /\.transaction\(\)/.test(readFileSync(join(root, file), 'utf8')));
  assert.deepEqual(opening, []);
});
