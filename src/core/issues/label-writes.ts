// A repository's labels made, changed and deleted (the public API; an issue write makes the labels it
// names itself: ./writes.ts). Each write and its `label` activity in one transaction; a deletion
// takes the label off every issue (the rows cascade), without an `unlabeled` per issue, as the
// platform sends none.
import type { Executor } from '../../db/index.ts';
import { Service } from '../../platform/service.ts';
import { insertUnique, notFound } from '../../platform/errors.ts';
import { recordRepositoryActivity } from '../repositories/activities.ts';
import { stillWritable } from '../repositories/lookup.ts';
import * as labels from '../repositories/label-store.ts';
import type { LabelRow } from '../repositories/label-store.ts';
import { labelRepresentation, type RepositoryRow } from '../repositories/representations.ts';
import type { UserRow } from '../accounts/store.ts';

type Repository = RepositoryRow & { owner: UserRow };

export interface LabelInput {
  name: string;
  /** Six hexadecimal digits, with or without `#`. */
  color?: string;
  description?: string | null;
}

/** A color as kept: lowercase, without `#`. */
const colorOf = (color: string) => color.replace(/^#/, '').toLowerCase();

export class LabelWrites extends Service {
  async createLabel(repository: Repository, actor: UserRow, input: LabelInput): Promise<LabelRow> {
    const now = this.now();
    return this.transaction(async (trx) => {
      await stillWritable(trx, repository.id, this.ctx.db.dialect === 'postgres');
      const label = await insertUnique('Label', 'name', () => labels.insertLabel(trx, {
        repository_id: repository.id, name: input.name, name_lower: input.name.toLowerCase(), color: colorOf(input.color ?? 'ededed'),
        description: input.description ?? null, is_default: 0, created_at: now, updated_at: now,
      }));
      await this.record(trx, repository, actor, 'label.created', label, {});
      return label;
    });
  }

  /** Renames (`new_name`), recolors or redescribes a label; what changed is the `edited` event's `changes`. */
  async updateLabel(repository: Repository, actor: UserRow, name: string, input: Partial<LabelInput> & { new_name?: string }): Promise<LabelRow> {
    return this.transaction(async (trx) => {
      await stillWritable(trx, repository.id, this.ctx.db.dialect === 'postgres');
      const label = await labels.findLabel(trx, repository.id, name);
      if (!label) throw notFound();
      const values = {
        ...(input.new_name !== undefined ? { name: input.new_name, name_lower: input.new_name.toLowerCase() } : {}),
        ...(input.color !== undefined ? { color: colorOf(input.color) } : {}),
        ...(input.description !== undefined ? { description: input.description } : {}),
      };
      const changes = {
        ...(values.name !== undefined && values.name !== label.name ? { name: { from: label.name } } : {}),
        ...(values.color !== undefined && values.color !== label.color ? { color: { from: label.color } } : {}),
        ...(values.description !== undefined && values.description !== label.description ? { description: { from: label.description } } : {}),
      };
      if (!Object.keys(changes).length) return label;
      const updated = await insertUnique('Label', 'name', () => labels.updateLabel(trx, label.id, { ...values, updated_at: this.now() }));
      await this.record(trx, repository, actor, 'label.edited', updated, { changes });
      return updated;
    });
  }

  async deleteLabel(repository: Repository, actor: UserRow, name: string): Promise<void> {
    await this.transaction(async (trx) => {
      await stillWritable(trx, repository.id, this.ctx.db.dialect === 'postgres');
      const label = await labels.findLabel(trx, repository.id, name);
      if (!label) throw notFound();
      await labels.deleteLabel(trx, label.id);
      await this.record(trx, repository, actor, 'label.deleted', label, {});
    });
  }

  private async record(trx: Executor, repository: Repository, actor: UserRow, name: 'label.created' | 'label.edited' | 'label.deleted', label: LabelRow, extra: { changes?: object }): Promise<void> {
    const payload = { label: labelRepresentation(this.ctx.urls, repository.owner, repository, label), ...extra };
    // The callers tie the name to its payload (`changes` on `edited` only).
    await recordRepositoryActivity(this.ctx, trx, { name, repository_id: repository.id, actor_id: actor.id, payload: payload as never });
  }
}
