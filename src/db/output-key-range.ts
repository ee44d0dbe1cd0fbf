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

/** A SQL fill's one row (CompiledRun.fillChunkFromSql): its count, and its key range where the run takes one. */
export interface FillAnswer {
  n: number;
  lo?: string | null;
  hi?: string | null;
}

export function fillAnswer(compiled: Pick<CompiledRun, 'outputKeyRange'>, row: FillAnswer): { rows: number; range: OutputKeyRange | null } {
  return { rows: row.n, range: compiled.outputKeyRange ? { lo: row.lo ?? null, hi: row.hi ?? null } : null };
}
