// Entries that arrive as plain data (an area's seed-file lists, which src/admin/seed.ts hands over,
// or list items an operator route checks itself): every entry is checked against its schema, with the
// schema's defaults filled in; a bad entry is a 422 naming the key and index.
import type { Static, TSchema } from 'typebox';
import { Value } from 'typebox/value';
import { invalidField } from './errors.ts';

export function checkEntries<T extends TSchema>(schema: T, key: string, entries: readonly unknown[], resource = 'Seed'): Static<T>[] {
  return entries.map((raw, index) => {
    const value = Value.Default(schema, Value.Clone(raw));
    if (!Value.Check(schema, value)) {
      const [first] = Value.Errors(schema, value);
      throw invalidField(resource, `${key}[${index}]${first?.instancePath ?? ''}`, `${key}[${index}]${first?.instancePath ?? ''}: ${first?.message ?? 'invalid entry'}`);
    }
    return value as Static<T>;
  });
}
