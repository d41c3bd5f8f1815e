// The response shape of updater repository access: an access list, its default level and its
// repositories.
import { Type, type Static } from 'typebox';
import { MinimalRepository } from '../../core/repositories/representations.ts';

export const DefaultLevel = Type.Union([Type.Literal('public'), Type.Literal('internal')], {
  description: '`public`: public repositories only unless granted otherwise; `internal`: public and internal ones',
});

export const UpdaterAccessList = Type.Object({
  default_level: Type.Union([DefaultLevel, Type.Null()]),
  accessible_repositories: Type.Array(MinimalRepository),
});
export type UpdaterAccessList = Static<typeof UpdaterAccessList>;
