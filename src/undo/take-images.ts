/**
 * A chunk's before-images (docs/undo.md), around its write in chunk.ts: taken just before it,
 * then held against what it changed.
 */
import type pg from 'pg';
import type { PartitionRow } from '../ledger/partitions';
import type { RunContext } from '../activities/run-context';
import type { OutputKeyRange } from '../compiler/target-join';
import { TransformError } from '../transforms/transform-error';

/**
 * Before-images (docs/undo.md): the rows the write is about to change, as they are, in the same
 * transaction and snapshot — so an image exists exactly when its write commits. Returns how
 * many, or null when the run keeps none (`undo: off`).
 */
export async function captureBeforeImages(
  client: pg.PoolClient,
  ctx: RunContext,
  bounds: PartitionRow['bounds'],
  range: OutputKeyRange | null,
  outputRows: number,
): Promise<number | null> {
  if (!ctx.images) return null;
  let imaged = 0;
  for (const statement of ctx.images.compiled.capture(ctx.images.tables, bounds, range, outputRows)) {
    imaged += (await client.query<{ imaged: number }>(statement.text, statement.values)).rows[0].imaged;
  }
  return imaged;
}

/**
 * The write changed another number of rows than were imaged just before it, under the same
 * snapshot: something between them (a trigger that skips rows, a rule) decides what is written,
 * and a revert could not be exact. Nothing of the chunk commits.
 */
export function imagesDiffer(ctx: RunContext, imaged: number, written: number): TransformError {
  const target = ctx.spec.target.table;
  const what =
    `the write changed ${written} row(s) of ${target} but ${imaged} were about to change when their before-images were taken; ` +
    `a trigger or rule on ${target} may be deciding what is written, so a revert could not be exact. Nothing of this chunk was committed; ` +
    'drop the trigger or rule for the run, or set undo: off in the spec (docs/undo.md)';
  return new TransformError(what, what);
}
