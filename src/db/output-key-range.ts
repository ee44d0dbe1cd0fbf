/**
 * A chunk's output key range, read once in its transaction after a TypeScript transform's fill
 * (a SQL fill answers it itself: CompiledRun.fillChunkFromSql): the statements that meet the
 * target (before-images, write, reconcile) take it as two parameters instead of each scanning
 * the output table for its min() and max() (bench/RESULTS.md, "Per-chunk statements").
 */
import type pg from 'pg';
import type { CompiledRun } from '../compiler/statements';
import type { OutputKeyRange } from '../compiler/target-join';

export async function readOutputKeyRange(client: pg.ClientBase, compiled: Pick<CompiledRun, 'outputKeyRange'>): Promise<OutputKeyRange | null> {
  if (!compiled.outputKeyRange) return null;
  return (await client.query<OutputKeyRange>(compiled.outputKeyRange)).rows[0];
}
