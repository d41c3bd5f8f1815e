// Permissions of apps, installations and fine-grained tokens: `{name: 'read' | 'write'}` maps, write
// including read. One parser for stored columns, one intersection for every grant computation.

export type Level = 'read' | 'write';
export type Permissions = Record<string, Level>;

const levelRank = { read: 1, write: 2 } as const;

/**
 * What every one of the permission sets allows: a permission present in all of them, at the lowest
 * of their levels (write includes read; absent on any side is absent). `null` sets narrow nothing.
 */
export function intersectPermissions(...sets: (Permissions | null)[]): Permissions {
  const present = sets.filter((set): set is Permissions => set !== null);
  if (!present.length) return {};
  const [first, ...rest] = present;
  // Own properties only, into a null-prototype object: a permission named `toString` is just a name.
  const out: Permissions = Object.create(null) as Permissions;
  for (const [name, level] of Object.entries(first!)) {
    let lowest: Level | undefined = level;
    for (const set of rest) {
      const other = Object.hasOwn(set, name) ? set[name] : undefined;
      if (!other) {
        lowest = undefined;
        break;
      }
      if (levelRank[other] < levelRank[lowest]) lowest = other;
    }
    if (lowest && levelRank[lowest]) out[name] = lowest;
  }
  return out;
}

/** A stored permissions column; anything that is not a map of `read`/`write` levels grants nothing. */
export function parsePermissions(text: string | null | undefined): Permissions {
  let value: unknown;
  try {
    value = JSON.parse(text ?? '{}');
  } catch {
    return {};
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return {};
  const out: Permissions = Object.create(null) as Permissions;
  for (const [name, level] of Object.entries(value)) if (level === 'read' || level === 'write') out[name] = level;
  return out;
}
