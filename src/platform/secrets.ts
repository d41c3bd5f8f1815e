// The server's secret key: signs short-lived URLs (HMAC) and encrypts secrets that must be read back
// (webhook secrets sign deliveries) with AES-256-GCM. It comes from CODEHOST_SECRET_KEY, or is
// generated once and kept in the database so every process shares it.
import { createCipheriv, createDecipheriv, createHash, createHmac, randomBytes } from 'node:crypto';
import { ConfigError } from '../config.ts';
import type { Executor } from '../db/index.ts';
import { deleteSetting, ensureSetting, findSetting, putSetting } from './settings-store.ts';
import { randomBase62, secretsEqual } from './tokens.ts';

export class Secrets {
  private readonly key: Buffer;

  constructor(secretKey: string) {
    this.key = createHash('sha256').update(secretKey).digest();
  }

  encrypt(plain: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    return ['v1', iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), body.toString('base64url')].join('.');
  }

  decrypt(sealed: string): string {
    const [version, iv, tag, body] = sealed.split('.');
    if (version !== 'v1' || !iv || !tag || body === undefined) throw new Error('not a sealed secret');
    const decipher = createDecipheriv('aes-256-gcm', this.key, Buffer.from(iv, 'base64url'));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]).toString('utf8');
  }

  sign(value: string): string {
    return createHmac('sha256', this.key).update(value).digest('base64url');
  }

  verify(value: string, signature: string): boolean {
    return secretsEqual(this.sign(value), signature);
  }
}

// --- One key for every process of a database --------------------------------------------------------

/** Where the database keeps the fingerprint of the key in force, and the key generated when none is set. */
const FINGERPRINT = 'secret_key_fingerprint';
const GENERATED = 'secret_key';

/**
 * A key's fingerprint: an HMAC of a constant under the key. It tells two keys apart and reveals
 * nothing of either (it is shown in messages and kept in the database).
 */
export function keyFingerprint(secretKey: string): string {
  return new Secrets(secretKey).sign('codehost secret key fingerprint').slice(0, 16);
}

/**
 * The secret key this process uses: CODEHOST_SECRET_KEY (`configured`), or the key generated once and
 * kept in the database. The database keeps the fingerprint of the key in force, and a process with
 * another key refuses to start (a ConfigError, one line): processes that sign and seal with
 * different keys answer each other's signed URLs with 403 and cannot open each other's secrets.
 * The cases: a set key that is not the database's; no key set while the database is used with a set
 * one; a set key while the database's secrets are sealed with the key generated in it (the README
 * says how to rotate).
 */
export async function settleSecretKey(db: Executor, configured: string | null): Promise<string> {
  const generated = await findSetting(db, GENERATED);
  // A database from before fingerprints: the generated key, if there is one, is the key in force.
  const recorded = (await findSetting(db, FINGERPRINT)) ?? (generated === undefined ? undefined : keyFingerprint(generated));
  if (configured) {
    const mine = keyFingerprint(configured);
    // The first process with a key records it (another process may record first: its key counts).
    const inForce = recorded ?? (await ensureSetting(db, FINGERPRINT, mine));
    if (inForce === mine) {
      await ensureSetting(db, FINGERPRINT, mine);
      return configured;
    }
    if (generated !== undefined && inForce === keyFingerprint(generated)) {
      throw new ConfigError(
        `CODEHOST_SECRET_KEY is set (fingerprint ${mine}), but this database's secrets are sealed with the key generated in it (fingerprint ${inForce}): unset CODEHOST_SECRET_KEY, or move the database to your key (README: Rotating the secret key)`,
      );
    }
    throw new ConfigError(
      `CODEHOST_SECRET_KEY is not the key this database is used with (this key's fingerprint is ${mine}, the database's ${inForce}): every process must have the same key; set the one the other processes use, or rotate every process to the new key (README: Rotating the secret key)`,
    );
  }
  if (recorded !== undefined && (generated === undefined || recorded !== keyFingerprint(generated))) {
    throw new ConfigError(
      `CODEHOST_SECRET_KEY is not set, but this database is used with a set key (fingerprint ${recorded}): set the same CODEHOST_SECRET_KEY as the other processes`,
    );
  }
  const key = await ensureSetting(db, GENERATED, randomBase62(48));
  await ensureSetting(db, FINGERPRINT, keyFingerprint(key));
  return key;
}

/**
 * `codehost secret-key rotate`, with every process stopped: in one transaction, every sealed secret
 * is opened with the key in force (`current`: CODEHOST_SECRET_KEY, or when unset the key generated in
 * the database) and sealed with `next`, and the database records `next`'s fingerprint (a generated
 * key is dropped). `current` must be the database's key (the refusals of settleSecretKey). Signed
 * URLs issued under the old key stop verifying. Answers how many secrets were sealed again.
 */
export async function rotateSecretKey(
  db: Executor,
  current: string | null,
  next: string,
  reseal: (trx: Executor, reseal: (sealed: string) => string) => Promise<number>,
): Promise<{ resealed: number; from: string; to: string }> {
  return db.transaction().execute(async (trx) => {
    const inForce = await settleSecretKey(trx, current);
    const [from, to] = [keyFingerprint(inForce), keyFingerprint(next)];
    if (from === to) throw new ConfigError(`secret-key rotate: CODEHOST_NEW_SECRET_KEY is the key in force (fingerprint ${from}): make a new one with \`codehost secret-key generate\``);
    const [before, after] = [new Secrets(inForce), new Secrets(next)];
    const resealed = await reseal(trx, (sealed) => after.encrypt(before.decrypt(sealed)));
    await putSetting(trx, FINGERPRINT, to);
    await deleteSetting(trx, GENERATED);
    return { resealed, from, to };
  });
}
