// Debian's nginx run as a child process around deploy/nginx.conf's site (the system service is not
// started): a prefix directory of its own, a main configuration that includes the site, and its
// command line arguments (test/deploy/reverse-proxy.test.ts, test/deploy/deploy-kit.test.ts).
import { chmodSync, existsSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** nginx's binary, or undefined when it is not installed (`.ci/run` installs it). */
export const NGINX = ['/usr/sbin/nginx', '/usr/bin/nginx'].find((path) => existsSync(path));

export const NGINX_MISSING = 'nginx is not installed (Debian: apt-get install nginx; .ci/run installs it)';

/** A new prefix directory for nginx (its workers run as nobody: they write request bodies to its temp directory). */
export function nginxPrefix(name: string): string {
  const prefix = mkdtempSync(join(tmpdir(), `${name}-`));
  chmodSync(prefix, 0o755);
  for (const dir of ['logs', 'temp']) mkdirSync(join(prefix, dir), { mode: 0o777 });
  chmodSync(join(prefix, 'temp'), 0o777);
  return prefix;
}

/** Writes the main configuration around `site` (a server block and what it needs) into `prefix`; answers nginx's arguments for it. */
export function nginxConfiguration(prefix: string, site: string): string[] {
  const temp = (name: string) => `${name}_temp_path ${join(prefix, 'temp', name)};`;
  const conf = join(prefix, 'nginx.conf');
  writeFileSync(conf, [
    'daemon off;',
    'worker_processes 1;',
    `pid ${join(prefix, 'nginx.pid')};`,
    `error_log ${join(prefix, 'logs/error.log')} warn;`,
    'events { worker_connections 64; }',
    'http {',
    `  access_log ${join(prefix, 'logs/access.log')};`,
    ...['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'].map((name) => `  ${temp(name)}`),
    site,
    '}',
  ].join('\n'));
  return ['-p', prefix, '-e', join(prefix, 'logs/error.log'), '-c', conf];
}
