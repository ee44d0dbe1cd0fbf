/**
 * A chunk's output rows into the session's output table, in the chunk's transaction: computed
 * by the spec's SQL in PostgreSQL, or by a TypeScript transform in Node (transforms/module-fill.ts).
 */
import type pg from 'pg';
import type { PartitionRow } from '../ledger/partitions';
import type { OutputKeyRange } from '../compiler/target-join';
import { fillAnswer, readOutputKeyRange, type FillAnswer } from '../db/output-key-range';
import { fillFromModule, type OutputTable } from '../transforms/module-fill';
import type { RunContext } from './run-context';

export interface FilledOutput {
  rows: number;
  /** The output's key range, for the statements that meet the target; null where they take none. */
  range: OutputKeyRange | null;
}

/** Fills the session's output table with the chunk's transformed rows: how many, and their key range. */
export async function fillOutput(
  client: pg.PoolClient,
  ctx: RunContext,
  table: OutputTable,
  bounds: PartitionRow['bounds'],
  cursor: string | null,
  hi: string | null,
): Promise<FilledOutput> {
  const { compiled, module } = ctx;
  if (!module) {
    // one statement: the fill answers its own count and key range
    const fill = compiled.fillChunkFromSql(bounds, cursor, hi);
    return fillAnswer(compiled, (await client.query<FillAnswer>(fill.text, fill.values)).rows[0]);
  }
  const rows = await fillFromModule(client, { ...ctx, module }, table, bounds, cursor, hi);
  return { rows, range: await readOutputKeyRange(client, compiled) };
}
