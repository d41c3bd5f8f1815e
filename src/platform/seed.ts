// Seed-file entries of an area's own keys (src/admin/seed.ts hands each area its lists): every entry
// is checked against its schema, with the schema's defaults filled in; a bad entry is a 422 naming
// the key and index.
import type { Static, TSchema } from 'typebox';
import { Value } from 'typebox/value';
import { invalidField } from './errors.ts';

export function seedEntries<T extends TSchema>(schema: T, key: string, entries: readonly unknown[]): Static<T>[] {
  return entries.map((raw, index) => {
    const value = Value.Default(schema, Value.Clone(raw));
    if (!Value.Check(schema, value)) {
      const [first] = Value.Errors(schema, value);
      throw invalidField('Seed', `${key}[${index}]${first?.instancePath ?? ''}`, `${key}[${index}]: ${first?.message ?? 'invalid entry'}`);
    }
    return value as Static<T>;
  });
}
