/**
 * CompiledRun: every statement a run's chunks and checks execute, as compileRun (statements.ts)
 * builds them from a resolved spec and the run's shape. Types only.
 */
import type { PartitionBounds } from '../domain/types';
import type { OutputKeyRange } from './target-join';

export interface Statement {
  text: string;
  values: unknown[];
}

export interface CompiledRun {
  /** Creates this session's output table once; a no-op afterwards. */
  createOutputTable: string;
  outputTable: string;
  /**
   * How many rows the next chunk holds and its last key: `n`, `hi`. `likelyLast`: the chunk is
   * expected to be the partition's last (fewer than `limit` rows left), and the statement is
   * shaped to answer that case with one scan; either way it answers the same.
   */
  chunkBounds(bounds: PartitionBounds, cursor: string | null, limit: number, likelyLast?: boolean): Statement;
  /** How many rows the partition has after the cursor (`n`), counted up to `cap`: what a split weighs. */
  rowsLeft(bounds: PartitionBounds, cursor: string | null, cap: number): Statement;
  /** SQL transform: fills the output table from the chunk (rowCount = output rows). */
  fillFromSql(bounds: PartitionBounds, cursor: string | null, hi: string | null): Statement;
  /**
   * The chunk's fill: `fillFromSql`, answering one row of the output's count (`n`) and, where
   * `outputKeyRange` is not null, its key range (`lo`, `hi`) from the rows it inserted, so the
   * chunk needs neither a second round trip nor a scan of the output table for them.
   */
  fillChunkFromSql(bounds: PartitionBounds, cursor: string | null, hi: string | null): Statement;
  /** Module transform: the chunk's rows, read for the transform in Node. */
  readChunk(bounds: PartitionBounds, cursor: string | null, hi: string | null, columns: string[] | undefined): Statement;
  /** Module transform: fills the output table from rows serialised as one JSON array. */
  fillFromJson(rowsJson: string): Statement;
  /** Module transform: the same fill from COPY text (transforms/copy-text.ts says when it may). */
  fillFromCopy: string;
  /** Module transform: whether the output table's columns may take COPY text (`ok`). */
  outputTakesCopy: Statement;
  /**
   * The output rows' key range (`lo`, `hi`), read once after a TypeScript transform's fill (a SQL
   * fill answers it: `fillChunkFromSql`) for the statements that
   * meet the target (write, reconcile, before-images); null where the target key's type has no
   * min() and max() that follow its index, and those statements take none.
   */
  outputKeyRange: string | null;
  /** Writes only what differs; rowCount = rows written. Replace mode returns two statements. */
  write(bounds: PartitionBounds, range: OutputKeyRange | null): Statement[];
  /**
   * Replace mode: output rows whose target.partitionColumn lies outside the partition that
   * computed them (`key`, `value`, `total` of a few); such a row would overwrite a row another
   * partition owns, so the chunk must not write at all.
   */
  outsidePartition(bounds: PartitionBounds): Statement;
  /**
   * Source rows in scope now that no planned partition covers (`n`): rows that arrived above
   * the last bound or below the first, list values the plan did not have, NULLs where the plan
   * had no NULL partition. The plan is contiguous, so its extent is enough.
   */
  outsidePlan(planned: PartitionBounds[]): Statement;
  /**
   * After the write, in the chunk's transaction: output rows the target does not hold as
   * computed. `missing` (no target row with the key: update mode's skipped rows), `differing`
   * (the row is there with other values), and a few of their keys.
   */
  reconcile(range: OutputKeyRange | null): Statement;
  /** Update mode: output rows whose key the target lacks (`n`), which an update cannot write. */
  countAbsent(): Statement;
  /**
   * Verification (src/gates): the SQL transform recomputed for (cursor, hi] of a partition,
   * typed like the target, compared with what the target holds.
   * `compared`, `missing` (no target row with the key), `differing`, `extra` (replace mode:
   * target rows of the partition the transform no longer produces) and a few `examples` keys.
   */
  compareFromSql(bounds: PartitionBounds, cursor: string | null, hi: string | null, types: string[]): Statement;
  /** The same comparison for a TypeScript transform's output rows, serialised as one JSON array. */
  compareFromJson(bounds: PartitionBounds, rowsJson: string, types: string[], wholePartition: boolean): Statement;
  /** The same comparison for a TypeScript transform's output rows already in the session's output table. */
  compareFromOutputTable(bounds: PartitionBounds, types: string[], wholePartition: boolean): Statement;
  /** Whether this session has its output table (`here`): a session that ran chunks of the run does. */
  outputTableHere: Statement;
  /**
   * `plan`'s preview: up to `limit` output rows of (cursor, hi] that a write would insert or
   * change, as `key`, `current` (the target row, JSON; NULL when absent) and `computed` (JSON).
   */
  previewFromSql(bounds: PartitionBounds, cursor: string | null, hi: string | null, types: string[], limit: number): Statement;
  previewFromJson(rowsJson: string, types: string[], limit: number): Statement;
  /** Invariant SQL with `source_rows` bound to a partition's source rows in scope, or the whole plan's (bounds omitted); up to `limit` violating rows as text and their count. */
  invariant(sql: string, bounds: PartitionBounds | null, limit: number): Statement;
  /** The chunk (cursor, hi] in words, for errors: `id in (10, 20]` or `(created_at, id) in (…, …]`. */
  describeRange(bounds: PartitionBounds | undefined, cursor: string | null, hi: string | null): string;
}
