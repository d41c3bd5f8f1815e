// The operator's tokens (POST /_admin/tokens, seed files' `tokens`): a user's personal access
// token, classic (scopes) or fine-grained (a resource owner, its repositories, permissions).
// Issued by core/access (issueToken), where every kind of token is made.
import { invalidField } from '../../platform/errors.ts';
import { Service } from '../../platform/service.ts';
import { tokenKindOf } from '../../platform/tokens.ts';
import { requireAccount } from '../accounts/lookup.ts';
import { accountRepositoryIds } from '../repositories/lookup.ts';
import { issueToken, type Permissions } from '../access/index.ts';

export class TokenWrites extends Service {
  async createToken(input: {
    login: string;
    kind: 'classic' | 'fine_grained';
    scopes?: string[];
    resource_owner?: string;
    repositories?: 'all' | string[];
    permissions?: Permissions;
    expires_at?: string;
    value?: string;
    note?: string;
  }) {
    const user = await requireAccount(this.db, input.login, 'user');
    if (input.value !== undefined && tokenKindOf(input.value) !== input.kind) {
      throw invalidField('Token', 'value', `value must be a well-formed ${input.kind} token`);
    }
    let resourceOwnerId: number | null = null;
    let repositoryIds: number[] = [];
    let selection: 'all' | 'selected' = 'all';
    if (input.kind === 'fine_grained') {
      const owner = input.resource_owner ? await requireAccount(this.db, input.resource_owner) : user;
      resourceOwnerId = owner.id;
      if (Array.isArray(input.repositories)) {
        selection = 'selected';
        repositoryIds = await accountRepositoryIds(this.db, owner, input.repositories);
      }
    } else if (input.permissions || input.resource_owner || input.repositories) {
      throw invalidField('Token', 'kind', 'permissions, resource_owner and repositories belong to fine-grained tokens');
    }
    return issueToken(this.db, this.ctx.clock, {
      kind: input.kind,
      value: input.value,
      user_id: user.id,
      scopes: input.kind === 'classic' ? (input.scopes ?? []) : [],
      permissions: input.kind === 'fine_grained' ? (input.permissions ?? {}) : {},
      resource_owner_id: resourceOwnerId,
      repository_selection: selection,
      repository_ids: repositoryIds,
      expires_at: input.expires_at ?? null,
      note: input.note ?? null,
    });
  }
}
