import type { Kysely } from 'kysely';
import { withId } from './helpers.ts';

// The tables of this area (see src/db/tables/code-security.ts), and the built-in global configuration.
export async function up(db: Kysely<any>): Promise<void> {
  await withId(db, db.schema.createTable('code_security_configurations'))
    .addColumn('target_type', 'text', (c) => c.notNull())
    .addColumn('org_id', 'integer', (c) => c.references('users.id').onDelete('cascade'))
    .addColumn('enterprise_id', 'integer', (c) => c.references('enterprises.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('name_lower', 'text', (c) => c.notNull())
    .addColumn('description', 'text', (c) => c.notNull())
    .addColumn('settings', 'text', (c) => c.notNull())
    .addColumn('enforcement', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    // NULLs are distinct: organization names and enterprise names are unique each in their own owner.
    .addUniqueConstraint('code_security_configurations_org_name', ['org_id', 'name_lower'])
    .addUniqueConstraint('code_security_configurations_enterprise_name', ['enterprise_id', 'name_lower'])
    .execute();

  await db.schema
    .createTable('code_security_attachments')
    .addColumn('repository_id', 'integer', (c) => c.primaryKey().references('repositories.id').onDelete('cascade'))
    .addColumn('configuration_id', 'integer', (c) => c.notNull().references('code_security_configurations.id').onDelete('cascade'))
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('code_security_attachments_configuration')
    .on('code_security_attachments')
    .columns(['configuration_id', 'repository_id'])
    .execute();

  await db.schema
    .createTable('code_security_defaults')
    .addColumn('owner_type', 'text', (c) => c.notNull())
    .addColumn('owner_id', 'integer', (c) => c.notNull())
    .addColumn('repository_type', 'text', (c) => c.notNull())
    .addColumn('configuration_id', 'integer', (c) => c.notNull().references('code_security_configurations.id').onDelete('cascade'))
    .addPrimaryKeyConstraint('code_security_defaults_pk', ['owner_type', 'owner_id', 'repository_type'])
    .execute();
  await db.schema.createIndex('code_security_defaults_configuration').on('code_security_defaults').columns(['configuration_id']).execute();

  await db.schema
    .createTable('code_security_licenses')
    .addColumn('owner_type', 'text', (c) => c.notNull())
    .addColumn('owner_id', 'integer', (c) => c.notNull())
    .addColumn('advanced_security', 'integer', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('code_security_licenses_pk', ['owner_type', 'owner_id'])
    .execute();

  await db.schema
    .createTable('code_security_license_seats')
    .addColumn('repository_id', 'integer', (c) => c.primaryKey().references('repositories.id').onDelete('cascade'))
    .addColumn('owner_type', 'text', (c) => c.notNull())
    .addColumn('owner_id', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('code_security_license_seats_owner').on('code_security_license_seats').columns(['owner_type', 'owner_id']).execute();

  // The built-in global configuration: the platform's recommended settings, read-only, visible to
  // every organization and enterprise. Written out here so the migration never changes with the code.
  const now = new Date().toISOString();
  await db
    .insertInto('code_security_configurations')
    .values({
      target_type: 'global',
      org_id: null,
      enterprise_id: null,
      name: 'Platform recommended',
      name_lower: 'platform recommended',
      description: 'Suggested settings for the dependency updater, secret scanning and code scanning.',
      settings: JSON.stringify({
        advanced_security: 'enabled',
        code_security: 'enabled',
        dependency_graph: 'enabled',
        dependency_graph_autosubmit_action: 'not_set',
        updater_alerts: 'enabled',
        updater_security_updates: 'not_set',
        updater_delegated_alert_dismissal: 'not_set',
        code_scanning_default_setup: 'enabled',
        code_scanning_delegated_alert_dismissal: 'not_set',
        secret_protection: 'enabled',
        secret_scanning: 'enabled',
        secret_scanning_push_protection: 'enabled',
        secret_scanning_delegated_bypass: 'not_set',
        secret_scanning_validity_checks: 'enabled',
        secret_scanning_non_provider_patterns: 'enabled',
        secret_scanning_generic_secrets: 'not_set',
        secret_scanning_delegated_alert_dismissal: 'not_set',
        secret_scanning_extended_metadata: 'not_set',
        private_vulnerability_reporting: 'enabled',
        dependency_graph_autosubmit_action_options: { labeled_runners: false },
        code_scanning_default_setup_options: { runner_type: 'not_set', runner_label: null },
        code_scanning_options: { allow_advanced: false },
        secret_scanning_delegated_bypass_options: { reviewers: [] },
      }),
      enforcement: 'unenforced',
      created_at: now,
      updated_at: now,
    })
    .execute();
}
