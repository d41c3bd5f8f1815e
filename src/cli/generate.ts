// `codehost secret-key generate`, `admin-token generate` and `token generate --kind KIND`.
import { parseArgs } from 'node:util';
import { ConfigError } from '../config.ts';

/** The commands that print a new value: no settings, no database. */
export async function generate(command: string, args: string[]): Promise<void> {
  const { randomBytes } = await import('node:crypto');
  const [{ generateToken }, { newAdminToken }] = await Promise.all([import('../platform/tokens.ts'), import('../admin/token.ts')]);
  if (command === 'secret-key') {
    console.log(randomBytes(32).toString('base64url'));
  } else if (command === 'admin-token') {
    console.log(newAdminToken());
  } else {
    const kinds = ['classic', 'fine_grained', 'oauth', 'app_user'] as const;
    let kind: string | undefined;
    try {
      kind = parseArgs({ args, options: { kind: { type: 'string' } } }).values.kind;
    } catch (error) {
      throw new ConfigError(`token generate: ${(error as Error).message}; see \`codehost help token\``);
    }
    if (!kind || !(kinds as readonly string[]).includes(kind)) {
      throw new ConfigError(`token generate: --kind must be one of ${kinds.join(', ')}${kind ? `, got "${kind}"` : ''}`);
    }
    console.log(generateToken(kind as (typeof kinds)[number]));
  }
}
