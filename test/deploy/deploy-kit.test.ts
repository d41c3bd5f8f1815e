// The deploy kit as a platform team uses it, literally: deploy/codehost.service's ExecStart (parsed
// out of the file) run as an unprivileged user from a checkout it cannot write (a copy owned by root
// with no write bit, as `npm ci` as root in /opt/codehost leaves it, or ProtectSystem=strict makes
// it), with the unit's working directory, environment and umask; the daily backup script that
// docs/deployment.md gives for cron, run by root beside it; deploy/nginx.conf with its TLS lines
// and its /_admin and /metrics allowlist uncommented, on this machine's nginx (Debian 12: 1.22);
// and the command spellings of README.md and docs/ (the checkout's own entry, never a bare npx).
import assert from 'node:assert/strict';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { request as httpsRequest } from 'node:https';
import { connect as tlsConnect, type TLSSocket } from 'node:tls';
import { chmodSync, chownSync, cpSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { createTestDatabase, engine, type TestDatabase } from '../helpers/database.ts';
import { NGINX, NGINX_MISSING, nginxConfiguration, nginxPrefix } from '../helpers/nginx.ts';
import { eventually, freePort, portOpen, startCli, type CliProcess } from '../helpers/process.ts';

const ROOT = new URL('../..', import.meta.url).pathname.replace(/\/$/, '');
const UNIT = readFileSync(join(ROOT, 'deploy/codehost.service'), 'utf8');

/** The unit's [Service] directives, each with every value it is given (Environment= may repeat). */
function serviceDirectives(unit: string): Map<string, string[]> {
  const directives = new Map<string, string[]>();
  let section = '';
  for (const raw of unit.split('\n')) {
    const line = raw.trim();
    if (!line || line.startsWith('#') || line.startsWith(';')) continue;
    const header = /^\[(.+)\]$/.exec(line);
    if (header) {
      section = header[1]!;
      continue;
    }
    if (section !== 'Service') continue;
    const at = line.indexOf('=');
    const [key, value] = [line.slice(0, at), line.slice(at + 1)];
    directives.set(key, [...(directives.get(key) ?? []), value]);
  }
  return directives;
}

const service = serviceDirectives(UNIT);
const one = (key: string): string => {
  const values = service.get(key) ?? [];
  assert.equal(values.length, 1, `deploy/codehost.service sets ${key} once`);
  return values[0]!;
};

/** The unprivileged user the test runs the unit's commands as (the unit's `codehost` stands for it). */
const USER = (() => {
  try {
    const id = (flag: string) => Number(execFileSync('id', [flag, 'nobody'], { encoding: 'utf8' }).trim());
    return { name: 'nobody', uid: id('-u'), gid: id('-g') };
  } catch {
    return null;
  }
})();
const skip = process.getuid?.() !== 0 ? 'runs commands as another user: needs root' : !USER ? 'no user `nobody` on this machine' : false;

/** systemd's PATH for a service that does not set one (systemd 240+, merged /usr). */
const SYSTEMD_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin';

let work: string;
/** The copy of the checkout, in place of /opt/codehost: owned by root, nothing in it writable. */
let checkout: string;
let database: TestDatabase;
let backups: string;
/** In place of /etc/codehost/codehost.env (root's, 0600). */
let envFile: string;

/** Replaces the unit's system paths by the test's. */
let paths: (text: string) => string;

/** Every file and directory under `path` without its write bits (symbolic links are left alone). */
function readOnly(path: string): void {
  const stat = lstatSync(path);
  if (stat.isSymbolicLink()) return;
  if (stat.isDirectory()) for (const name of readdirSync(path)) readOnly(join(path, name));
  chmodSync(path, stat.mode & 0o7555);
}

before(async () => {
  if (skip) return;
  work = mkdtempSync(join(tmpdir(), 'codehost-deploy-kit-'));
  chmodSync(work, 0o755);
  checkout = join(work, 'opt-codehost');
  // The checkout as it is (this worktree's files, not the last commit), without git's data and
  // what is not part of it.
  cpSync(ROOT, checkout, {
    recursive: true,
    filter: (source) => !/^\/(\.git|node_modules|data|reports|\.stryker-tmp)(\/|$)/.test(source.slice(ROOT.length)),
  });
  readOnly(checkout);
  // The dependencies as the service's user reaches them: through a link when every folder above
  // them is searchable by others; else (a clone under /root, say) as hard links in the copy (the
  // same files, no folder above them to cross), or a copy when they are on another file system.
  const modules = realpathSync(join(ROOT, 'node_modules'));
  const reachable = (): boolean => {
    for (let dir = modules; dir !== '/'; dir = join(dir, '..')) if ((statSync(dir).mode & 0o005) !== 0o005) return false;
    return true;
  };
  if (reachable()) symlinkSync(modules, join(checkout, 'node_modules'));
  else {
    try {
      execFileSync('cp', ['-al', modules, join(checkout, 'node_modules')]);
    } catch {
      rmSync(join(checkout, 'node_modules'), { recursive: true, force: true });
      execFileSync('cp', ['-a', modules, join(checkout, 'node_modules')]);
    }
  }
  database = await createTestDatabase();
  const data = database.dataDir;
  backups = join(work, 'var-backups-codehost');
  envFile = join(work, 'etc-codehost-codehost.env');
  mkdirSync(backups);
  for (const dir of [data, backups]) {
    // StateDirectoryMode=0700, owned by the service's user; the backups' directory as
    // docs/deployment.md makes it.
    chmodSync(dir, 0o700);
    chownSync(dir, USER!.uid, USER!.gid);
  }
  paths = (text) => text.replaceAll('/opt/codehost', checkout).replaceAll('/var/lib/codehost', data).replaceAll('/var/backups/codehost', backups)
    .replaceAll('/etc/codehost/codehost.env', envFile).replaceAll('-u codehost ', `-u ${USER!.name} `);
});

after(async () => {
  if (skip) return;
  await database?.drop();
  if (work) rmSync(work, { recursive: true, force: true });
});

/** /etc/codehost/codehost.env as docs/deployment.md has it filled in: a production server on loopback. */
function settingsFile(port: number): Record<string, string> {
  return {
    CODEHOST_HOST: '127.0.0.1',
    CODEHOST_PORT: String(port),
    CODEHOST_SECRET_KEY: execFileSync(process.execPath, [join(ROOT, 'bin/codehost.js'), 'secret-key', 'generate'], { encoding: 'utf8' }).trim(),
    CODEHOST_ADMIN_TOKEN: 'deploy-kit-test-admin-token-0123456789abcdef',
    CODEHOST_DEMO: '0',
    CODEHOST_LOG_LEVEL: 'warn',
    ...(database.databaseUrl ? { DATABASE_URL: database.databaseUrl } : {}),
  };
}

/** The service's environment: the unit's Environment= lines and its EnvironmentFile. */
function serviceEnvironment(settings: Record<string, string>): Record<string, string> {
  const env: Record<string, string> = { PATH: SYSTEMD_PATH, HOME: '/nonexistent', USER: USER!.name, LOGNAME: USER!.name };
  for (const line of service.get('Environment') ?? []) {
    for (const assignment of line.match(/"[^"]*"|\S+/g) ?? []) {
      const unquoted = assignment.replace(/^"(.*)"$/, '$1');
      const at = unquoted.indexOf('=');
      env[unquoted.slice(0, at)] = paths(unquoted.slice(at + 1));
    }
  }
  assert.equal(paths(one('EnvironmentFile')), envFile);
  return { ...env, ...settings };
}

/** A command line of the unit (or the docs) run as the unit runs it: that user, that directory, that umask. */
function runAsService(commandLine: string, env: Record<string, string>): CliProcess {
  const [command, ...args] = paths(commandLine).trim().split(/\s+/);
  assert.match(command!, /^\//, `${commandLine}: systemd needs an absolute path`);
  const umask = Number.parseInt(one('UMask'), 8);
  const previous = process.umask(umask);
  try {
    return startCli(args, { command: command!, cwd: paths(one('WorkingDirectory')), env, uid: USER!.uid, gid: USER!.gid });
  } finally {
    process.umask(previous);
  }
}

describe('deploy/codehost.service', { skip }, () => {
  test(`${engine}: its ExecStart serves as an unprivileged user from a read-only checkout, and stops on SIGTERM`, { timeout: 120_000 }, async () => {
    const port = await freePort();
    const settings = settingsFile(port);
    writeFileSync(envFile, Object.entries(settings).map(([name, value]) => `${name}=${value}\n`).join(''), { mode: 0o600 });
    const server = runAsService(one('ExecStart'), serviceEnvironment(settings));
    try {
      await server.waitFor(/codehost is listening on/, 90).catch((error: Error) => assert.fail(`${error.message}\n${server.output()}`));
      const ready = await fetch(`http://127.0.0.1:${port}/readyz`);
      assert.equal(ready.status, 200);

      // docs/deployment.md's daily backup script, run by root as cron runs it, beside the server.
      const deployment = readFileSync(join(ROOT, 'docs/deployment.md'), 'utf8');
      const script = /<<'SCRIPT'\n([\s\S]*?)\nSCRIPT\n/.exec(deployment)?.[1];
      assert.ok(script, 'docs/deployment.md gives the backup script for cron');
      const scriptFile = join(work, 'codehost-backup');
      writeFileSync(scriptFile, `${paths(script)}\n`, { mode: 0o755 });
      const cron = startCli([scriptFile], { command: '/bin/sh', cwd: '/', env: { PATH: '/usr/bin:/bin', HOME: '/root', SHELL: '/bin/sh' } });
      assert.equal(await cron.exited(), 0, cron.output());
      assert.match(cron.output(), /^backup: .* files/m);
      const [made, ...others] = readdirSync(backups);
      assert.deepEqual(others, [], 'one backup');
      const target = join(backups, made!);
      assert.equal(statSync(target).uid, USER!.uid, 'written by the service\'s user');
      assert.ok(existsSync(join(target, engine === 'sqlite' ? 'codehost.db' : 'codehost.pgdump')), readdirSync(target).join(' '));

      server.child.kill('SIGTERM');
      assert.equal(await server.exited(), 0, server.output());
    } finally {
      if (server.child.exitCode === null && server.child.signalCode === null) {
        server.child.kill('SIGKILL');
        await server.exited();
      }
    }
  });

  test('the checkout stayed as it was: nothing was written into it', () => {
    const written = readdirSync(checkout, { recursive: true, encoding: 'utf8' })
      .filter((path) => !path.startsWith('node_modules'))
      .filter((path) => (lstatSync(join(checkout, path)).mode & 0o222) !== 0 || lstatSync(join(checkout, path)).uid !== 0);
    assert.deepEqual(written, []);
  });
});


/** A GET over TLS to 127.0.0.1:port (the test's self-signed certificate), from a chosen loopback address. */
function tlsGet(port: number, path: string, from = '127.0.0.1'): Promise<{ status: number; alpn: string | false }> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest({ host: '127.0.0.1', port, path, servername: 'codehost.example.com', rejectUnauthorized: false, localAddress: from, agent: false, headers: { host: 'codehost.example.com' } }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode!, alpn: (res.socket as TLSSocket).alpnProtocol ?? false }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('deploy/nginx.conf', { skip: NGINX ? false : NGINX_MISSING }, () => {
  test('its TLS lines and its allowlist, uncommented, run on this nginx: TLS with HTTP/2, /_admin and /metrics refused to other addresses', { timeout: 60_000 }, async () => {
    const prefix = nginxPrefix('codehost-nginx-tls');
    let nginx: ChildProcess | undefined;
    try {
      const [cert, key] = [join(prefix, 'fullchain.pem'), join(prefix, 'privkey.pem')];
      execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', cert, '-days', '1', '-subj', '/CN=codehost.example.com'], { stdio: 'ignore' });
      const [port, upstream] = [await freePort(), await freePort()];

      // The file as its comments say: inside the server block, the commented directives (`#   `)
      // uncommented and `listen 80;` replaced by the TLS listen.
      let inServer = false;
      const lines: string[] = [];
      for (const line of readFileSync(join(ROOT, 'deploy/nginx.conf'), 'utf8').split('\n')) {
        if (/^server \{/.test(line)) inServer = true;
        if (inServer && /^\s*listen 80;\s*$/.test(line)) continue;
        const commented = inServer ? /^(\s*)# {3}(.*\S.*)$/.exec(line) : null;
        lines.push(commented ? `${commented[1]}${commented[2]}` : line);
      }
      const site = lines.join('\n')
        .replace(/^(\s*)listen 443 /m, `$1listen 127.0.0.1:${port} `)
        .replace('/etc/letsencrypt/live/codehost.example.com/fullchain.pem', cert)
        .replace('/etc/letsencrypt/live/codehost.example.com/privkey.pem', key)
        .replace('server 127.0.0.1:3000;', `server 127.0.0.1:${upstream};`);
      assert.match(site, new RegExp(`^\\s*listen 127\\.0\\.0\\.1:${port} ssl`, 'm'));
      assert.match(site, /^\s*ssl_certificate_key \//m);
      const args = nginxConfiguration(prefix, site);
      try {
        execFileSync(NGINX!, ['-t', '-q', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
      } catch (error) {
        assert.fail(`nginx -t refuses the TLS form of deploy/nginx.conf:\n${(error as { stderr: Buffer }).stderr}`);
      }
      assert.match(site, /^\s*deny all;/m, 'the allowlist');
      nginx = spawn(NGINX!, args, { stdio: ['ignore', 'inherit', 'inherit'] });
      assert.ok(await eventually(() => portOpen(port), 20), 'nginx listens');

      // TLS, HTTP/2 offered (ALPN h2); the API is passed on (502: no codehost behind it here).
      const alpn = await new Promise<string | false>((resolve, reject) => {
        const socket = tlsConnect({ host: '127.0.0.1', port, servername: 'codehost.example.com', rejectUnauthorized: false, ALPNProtocols: ['h2', 'http/1.1'] }, () => {
          resolve(socket.alpnProtocol ?? false);
          socket.end();
        });
        socket.on('error', reject);
      });
      assert.equal(alpn, 'h2', 'HTTP/2 over TLS');
      assert.equal((await tlsGet(port, '/api/v3/')).status, 502, 'the API is passed on to codehost');
      // The operators' endpoints from an address not on the list, however the path is spelt.
      for (const path of ['/_admin/users', '/metrics', '/metrics/', '/%5Fadmin/users', '/_ADMIN/users', '//_admin/users', '/api/../_admin/users', '/Metrics']) {
        assert.equal((await tlsGet(port, path)).status, 403, path);
      }
    } finally {
      if (nginx && nginx.exitCode === null) {
        nginx.kill('SIGQUIT');
        await new Promise((resolve) => nginx!.once('exit', resolve));
      }
      rmSync(prefix, { recursive: true, force: true });
    }
  });
});

describe('the commands of README.md and docs/', () => {
  const FILES = ['README.md', ...readdirSync(join(ROOT, 'docs')).filter((name) => name.endsWith('.md')).map((name) => `docs/${name}`)];

  test("each names the checkout's own entry: never a bare `npx codehost`, which outside the checkout asks the npm registry", () => {
    const bare: string[] = [];
    for (const file of FILES) {
      readFileSync(join(ROOT, file), 'utf8').split('\n').forEach((line, index) => {
        // npx straight before the name (no --no-install, --offline…), or npx/npm in front of
        // --version, which npm may take for its own.
        if (/\bnpx\s+codehost\b/.test(line) || /\b(npx|npm)\b[^`\n]*\bcodehost\s+--version\b/.test(line)) bare.push(`${file}:${index + 1}: ${line.trim()}`);
      });
    }
    assert.deepEqual(bare, []);
  });

  test("`bin/codehost.js --version`, from the checkout and by its path from elsewhere, prints codehost's version", async () => {
    const { version } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };
    const elsewhere = mkdtempSync(join(tmpdir(), 'codehost-elsewhere-'));
    try {
      for (const [cwd, command] of [[ROOT, 'bin/codehost.js --version'], [elsewhere, `${ROOT}/bin/codehost.js --version`]] as const) {
        const stdout = execFileSync('sh', ['-c', command], { cwd, encoding: 'utf8', env: { PATH: process.env.PATH, HOME: process.env.HOME } });
        assert.equal(stdout, `codehost ${version}\n`, `${command} in ${cwd}`);
      }
    } finally {
      rmSync(elsewhere, { recursive: true, force: true });
    }
  });
});
