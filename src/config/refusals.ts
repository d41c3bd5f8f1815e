// Production mode's refusals: the settings a server does not start with, and what makes a secret key weak.
import { isLoopbackHost, isLoopbackUrl } from './parse.ts';
import { unknownNames } from './settings.ts';
import type { Config, Env } from './types.ts';

/**
 * What is wrong with a secret key, or null: a key must carry 32 bytes (256 bits) of entropy. The
 * characters tell how much each can carry: a hex key (0-9, a-f) 4 bits, a base64 or base64url key
 * 6 bits, anything else (a passphrase) is counted at 6.5 bits; hence at least 64, 43 and 40
 * characters. A longer key made of few characters or of a repeated run (`k3k3k3…`) is refused too:
 * at least 12 distinct characters in a hex key, 20 in any other, and no key that repeats a shorter
 * one. A heuristic against mistakes and placeholders, not a measurement: `codehost secret-key
 * generate` makes keys from the CSPRNG.
 */
export function secretKeyWeakness(key: string): string | null {
  const hex = /^[0-9a-f]+$/i.test(key);
  const base64 = !hex && /^[A-Za-z0-9+/_-]+={0,2}$/.test(key);
  const [alphabet, minimum, distinct] = hex ? ['hex', 64, 12] : base64 ? ['base64', 43, 20] : ['passphrase', 40, 20];
  if (key.length < minimum) return `has ${key.length} character${key.length === 1 ? '' : 's'}: a ${alphabet} key needs at least ${minimum} for 32 bytes of entropy`;
  for (let period = 1; period <= key.length / 2; period++) {
    if (key.slice(period) === key.slice(0, key.length - period)) return `repeats a run of ${period} character${period === 1 ? '' : 's'} (it carries the entropy of that run alone)`;
  }
  const count = new Set(key).size;
  if (count < distinct) return `has ${count} distinct characters: a random ${alphabet} key of this length has at least ${distinct}`;
  return null;
}

/**
 * The settings a server refuses to start with, one line each (setting, reason, fix); empty when it
 * may start. Production mode refuses what is safe only on a machine nobody else reaches; every mode
 * refuses private webhook targets where a proxy or public URLs make the server reachable.
 */
export function refusals(config: Config, env: Env = {}): string[] {
  const lines: string[] = [];
  const laptop = 'CODEHOST_MODE=laptop on a machine only you reach';
  if (config.mode === 'production') {
    // A setting production mode would ignore (a misspelled name) is a setting the operator believes in force.
    for (const { name, nearest } of unknownNames(env)) {
      lines.push(`${name} is not a codehost setting: production mode does not start with a setting it would ignore; the nearest one is ${nearest} (the README lists them all)`);
    }
    if (config.demo) {
      lines.push(`CODEHOST_DEMO=1: production mode loads no demo data (its credentials are public); set CODEHOST_DEMO=0 (or ${laptop})`);
    }
    if (!config.adminToken) {
      // A generated token would be printed in the start banner, and so kept in the service's journal.
      lines.push('CODEHOST_ADMIN_TOKEN is not set: production mode generates none (the start banner would print it into the service\'s log for good); make one with `codehost admin-token generate` and set it');
    } else if (config.adminToken.length < 32) {
      lines.push(`CODEHOST_ADMIN_TOKEN has ${config.adminToken.length} character${config.adminToken.length === 1 ? '' : 's'}: production mode needs at least 32; make one with \`codehost admin-token generate\``);
    }
    const weakness = config.secretKey === null ? null : secretKeyWeakness(config.secretKey);
    if (!config.secretKey) {
      lines.push('CODEHOST_SECRET_KEY is not set: production mode needs a key of 32 bytes of entropy, the same on every process; make one with `codehost secret-key generate`');
    } else if (weakness) {
      lines.push(`CODEHOST_SECRET_KEY ${weakness}; make one with \`codehost secret-key generate\``);
    }
    if (config.testClock) {
      lines.push('CODEHOST_TEST_CLOCK=1 lets the admin token move the server\'s clock (and turns on test mode): production mode refuses it; unset CODEHOST_TEST_CLOCK');
    } else if (config.testMode) {
      lines.push('CODEHOST_TEST_MODE=1 turns on fault injection (/_admin/faults): production mode refuses it; unset CODEHOST_TEST_MODE');
    }
    if (!config.metricsToken && !(isLoopbackHost(config.host) && config.trustProxy === false)) {
      const why = config.trustProxy === false ? `the server listens on ${config.host}` : 'a proxy forwards to it (CODEHOST_TRUST_PROXY)';
      lines.push(`CODEHOST_METRICS_TOKEN is not set: GET /metrics would be open to anyone (${why}); set CODEHOST_METRICS_TOKEN (\`codehost admin-token generate\` makes a good one)`);
    }
  }
  if (config.webhooks.allowPrivateAddresses) {
    const why = config.mode === 'production' ? 'in production mode'
      : config.trustProxy !== false ? 'when a proxy is trusted (CODEHOST_TRUST_PROXY)'
      : !isLoopbackUrl(config.webUrl) || !isLoopbackUrl(config.apiUrl) ? 'when the public URLs (CODEHOST_WEB_URL, CODEHOST_API_URL) are not loopback'
      : null;
    if (why) {
      lines.push(`CODEHOST_WEBHOOK_ALLOW_PRIVATE=1: webhooks may not reach private and loopback addresses ${why} (an app owner would read internal services' answers in its deliveries); unset it, and list your receivers' networks in CODEHOST_WEBHOOK_ALLOW_NETWORKS (10.20.0.0/16)`);
    }
  }
  return lines;
}
