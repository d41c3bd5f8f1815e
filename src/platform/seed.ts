// Entries that arrive as plain data (an area's seed-file lists, which src/admin/seed.ts hands over,
// or list items an operator route checks itself): every entry is checked against its schema, with the
// schema's defaults filled in; a bad entry (an unknown key too) is a 422 naming the key and index.
import type { Static, TSchema } from 'typebox';
import { Value } from 'typebox/value';
import { invalidField } from './errors.ts';
import { closedObjects } from './schemas.ts';

export function checkEntries<T extends TSchema>(given: T, key: string, entries: readonly unknown[], resource = 'Seed'): Static<T>[] {
  // A key the entry's schema does not know is refused, as the admin API refuses it: a misspelt or
  // misplaced key (`private: true` for `visibility: private`) fails the load, not the repository.
  const schema = closedObjects(given);
  return entries.map((raw, index) => {
    const value = Value.Default(schema, Value.Clone(raw));
    if (!Value.Check(schema, value)) {
      const [first] = Value.Errors(schema, value);
      throw invalidField(resource, `${key}[${index}]${first?.instancePath ?? ''}`, `${key}[${index}]${first?.instancePath ?? ''}: ${first?.message ?? 'invalid entry'}`);
    }
    return value as Static<T>;
  });
}
