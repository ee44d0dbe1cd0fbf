/**
 * `backfill revert --dry-run` (docs/undo.md): what a revert of a run would do now, partition by
 * partition, writing nothing — the rows it would put back (still as the run left them), the rows
 * already as they were before the run, and the rows it would leave alone because someone changed
 * them since (conflicts). In replace mode a partition with a conflict is restored whole or not at
 * all, so it would be held, nothing of it restored. Read-only, one chunk's images at a time, by
 * the same statement the revert itself counts with (restore-statements.ts `tally`).
 */
import type pg from 'pg';
import { inReadOnlyCheck } from '../db/session';
import { UsageError } from '../domain/usage-error';
import { imageTablesOf } from '../ledger/before-images';
import { chunkTransactions, revertable } from '../ledger/reverts';
import type { RunRow } from '../ledger/runs';
import { resolveSpec } from '../specs/resolve';
import { compileRevert } from './restore-statements';

export interface PartitionRevertPreview {
  id: string;
  /** Rows the run changed in it (its before-images). */
  images: number;
  /** Rows a revert would put back now: still as the run left them. */
  restore: number;
  /** Rows already as they were before the run (restored by someone else, or changed back). */
  asBefore: number;
  /** Rows changed by someone since the run: left alone, their keys recorded. */
  conflicts: number;
  /** Replace mode with a conflict: the partition would be held, nothing of it restored. */
  held: boolean;
}

export interface RevertPreview {
  runId: string;
  name: string;
  target: string;
  partitions: PartitionRevertPreview[];
  totals: { images: number; restore: number; asBefore: number; conflicts: number; held: number };
}

export async function previewRevert(pool: pg.Pool, original: RunRow, only?: string[]): Promise<RevertPreview> {
  const can = await revertable(pool, original.run_id, only);
  if (!can.ok) throw new UsageError(can.refusal);
  const spec = resolveSpec(original.spec);
  const compiled = compileRevert(spec, original.shape, imageTablesOf(original.run_id), original.shape.revert ?? {});
  const replace = spec.target.mode === 'replace';
  const partitions = await inReadOnlyCheck(pool, async (client) => {
    const previews: PartitionRevertPreview[] = [];
    for (const p of can.partitions) {
      const tally = { images: 0, restore: 0, asBefore: 0, conflicts: 0 };
      for (const xid of await chunkTransactions(client, original.run_id, p.id)) {
        const t = compiled.tally(xid);
        const { rows } = await client.query<{ images: number; before: number; after: number; conflicts: number }>(t.text, t.values);
        tally.images += rows[0].images;
        tally.restore += rows[0].after;
        tally.asBefore += rows[0].before;
        tally.conflicts += rows[0].conflicts;
      }
      const held = replace && tally.conflicts > 0;
      previews.push({ id: p.id, ...tally, ...(held ? { restore: 0 } : {}), held });
    }
    return previews;
  });
  const sum = (k: 'images' | 'restore' | 'asBefore' | 'conflicts') => partitions.reduce((n, p) => n + p[k], 0);
  return {
    runId: original.run_id,
    name: original.name,
    target: original.target_relation ?? spec.target.table,
    partitions,
    totals: {
      images: sum('images'),
      restore: sum('restore'),
      asBefore: sum('asBefore'),
      conflicts: sum('conflicts'),
      held: partitions.filter((p) => p.held).length,
    },
  };
}
