// `codehost admin-token reset`: a new admin token stored hashed in the configured database (no
// server needs to run), printed once.
import { ConfigError, type Config } from '../config.ts';
import { openMigrated } from './startup.ts';

export async function resetAdminTokenCommand(config: Config, args: string[]): Promise<void> {
  if (args[0] !== 'reset' || args.length > 1) throw new ConfigError('admin-token: the actions are `codehost admin-token reset` and `codehost admin-token generate` (see `codehost help admin-token`)');
  const { db } = await openMigrated(config);
  try {
    const { resetAdminToken } = await import('../admin/token.ts');
    const token = await resetAdminToken(db);
    console.log(`new admin token (shown once, stored hashed; the previous one no longer works): ${token}`);
    if (config.adminToken) {
      console.log('note: CODEHOST_ADMIN_TOKEN is set: while it is, it is the admin token and this stored one is not used');
    }
  } finally {
    await db.close();
  }
}
