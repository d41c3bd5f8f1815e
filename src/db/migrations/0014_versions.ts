import { sql, type Kysely } from 'kysely';
import { isPostgres } from './helpers.ts';

// Stored versions that let a conditional GET be decided, and a rendered representation be reused,
// without reading what they are made of.
//
// `repository_versions`: one row per repository, its `version` moved forward in the writing
// transaction by triggers on everything a full Repository representation is made of: the
// repository's row (name, visibility, archived, owner...), its owner's login, type and site_admin,
// its open issues (insert, delete, state) and its watchers (repository_subscriptions); and the
// titles and types of the notification subjects in it, which every user's thread of the subject
// shows (activity that retitles a subject reaches only some of them). Being
// triggers, no write can forget them (the repository writes of src/core and src/admin need no call).
// Writes through a table not listed here that change the representation call `touchRepositories`
// (src/core/repositories/store.ts).
//
// `notification_inboxes.version`: moved forward by every write of the user's threads and thread
// subscriptions (`touchInboxes`); `repositories_digest`: the repositories the user's lists were
// last decided from (src/areas/notifications/store.ts, `listValidator`).
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('repository_versions')
    .addColumn('repository_id', 'integer', (c) => c.primaryKey().references('repositories.id').onDelete('cascade'))
    .addColumn('version', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await sql`insert into repository_versions (repository_id, version) select id, 0 from repositories`.execute(db);
  await db.schema.alterTable('notification_inboxes').addColumn('version', 'integer', (c) => c.notNull().defaultTo(0)).execute();
  await db.schema.alterTable('notification_inboxes').addColumn('repositories_digest', 'text').execute();

  const bump = (where: string) => `update repository_versions set version = version + 1 where ${where}`;
  if (isPostgres(db)) {
    await sql.raw(`
      create function codehost_repository_created() returns trigger language plpgsql as $$
      begin insert into repository_versions (repository_id, version) values (new.id, 0); return null; end $$;
      create trigger repository_versions_created after insert on repositories for each row execute function codehost_repository_created();

      create function codehost_repository_changed() returns trigger language plpgsql as $$
      begin ${bump('repository_id = new.id')}; return null; end $$;
      create trigger repository_versions_changed after update on repositories for each row execute function codehost_repository_changed();

      create function codehost_owner_changed() returns trigger language plpgsql as $$
      begin
        if new.login is distinct from old.login or new.type is distinct from old.type or new.site_admin is distinct from old.site_admin then
          ${bump('repository_id in (select id from repositories where owner_id = new.id)')};
        end if;
        return null;
      end $$;
      create trigger repository_versions_owner after update on users for each row execute function codehost_owner_changed();

      create function codehost_repository_counted() returns trigger language plpgsql as $$
      begin
        if tg_op <> 'INSERT' then ${bump('repository_id = old.repository_id')}; end if;
        if tg_op <> 'DELETE' and (tg_op = 'INSERT' or new.repository_id is distinct from old.repository_id) then ${bump('repository_id = new.repository_id')}; end if;
        return null;
      end $$;
      create trigger repository_versions_issues after insert or delete or update of state, repository_id on issues
        for each row execute function codehost_repository_counted();
      create trigger repository_versions_watchers after insert or delete or update on repository_subscriptions
        for each row execute function codehost_repository_counted();

      create function codehost_subject_retitled() returns trigger language plpgsql as $$
      begin
        if new.title is distinct from old.title or new.type is distinct from old.type then ${bump('repository_id = new.repository_id')}; end if;
        return null;
      end $$;
      create trigger repository_versions_subjects after update on notification_subjects for each row execute function codehost_subject_retitled();
    `).execute(db);
  } else {
    for (const statement of [
      `create trigger repository_versions_created after insert on repositories begin insert into repository_versions (repository_id, version) values (new.id, 0); end`,
      `create trigger repository_versions_changed after update on repositories begin ${bump('repository_id = new.id')}; end`,
      `create trigger repository_versions_owner after update of login, type, site_admin on users
         when new.login is not old.login or new.type is not old.type or new.site_admin is not old.site_admin
         begin ${bump('repository_id in (select id from repositories where owner_id = new.id)')}; end`,
      ...['issues', 'repository_subscriptions'].flatMap((table) => [
        `create trigger repository_versions_${table}_insert after insert on ${table} begin ${bump('repository_id = new.repository_id')}; end`,
        `create trigger repository_versions_${table}_delete after delete on ${table} begin ${bump('repository_id = old.repository_id')}; end`,
        `create trigger repository_versions_${table}_update after update${table === 'issues' ? ' of state, repository_id' : ''} on ${table}
           begin ${bump('repository_id in (old.repository_id, new.repository_id)')}; end`,
      ]),
      `create trigger repository_versions_subjects after update of title, type on notification_subjects
         when new.title is not old.title or new.type is not old.type
         begin ${bump('repository_id = new.repository_id')}; end`,
    ]) await sql.raw(statement).execute(db);
  }
}
