// The server's secret key: signs short-lived URLs (HMAC) and encrypts secrets that must be read back
// (webhook secrets sign deliveries) with AES-256-GCM. It comes from CODEHOST_SECRET_KEY, or is
// generated once and kept in the database so every process shares it.
import { createCipheriv, createDecipheriv, createHash, createHmac, randomBytes } from 'node:crypto';
import { secretsEqual } from './tokens.ts';

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
