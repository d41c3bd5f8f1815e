// Which statements the PostgreSQL pool may run again on a fresh connection when theirs was lost.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { onlyReads } from './index.ts';

test('a SELECT, and a WITH query that modifies nothing, are reads; anything that writes is not', () => {
  for (const read of [
    'select 1',
    '  SELECT id from notification_threads where updated_at > $1',
    'with recursive walk(repository_id) as (select 1 union all select repository_id + 1 from walk) select * from walk',
  ]) assert.equal(onlyReads(read), true, read);
  for (const write of [
    'insert into users (login) values ($1)',
    'update notification_threads set unread = 0 where id = $1',
    'with gone as (delete from sessions where id = $1 returning id) select count(*) from gone',
    'WITH moved AS (UPDATE jobs SET state = $1 RETURNING id) SELECT id FROM moved',
    'with x as (select 1) insert into t select * from x',
    'begin',
  ]) assert.equal(onlyReads(write), false, write);
});
