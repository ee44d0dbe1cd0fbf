/**
 * How a chunk's output rows meet the target's rows: the join on target.key, the same join
 * bounded to the output's key range, and "the target row holds other values". Shared by the
 * write, its checks (statements.ts) and the before-images taken just before it
 * (before-images.ts), which must pick exactly the rows the write will change.
 */
import { quoteIdent, quoteTable } from '../db/sql';
import type { ResolvedSpec } from '../specs/resolve';
import { hasMinMax } from './keyset';
import type { RunShape } from './shape';
import { outputTableName } from './output-table';
import { partitionPredicate, type Param } from './partition-predicate';
import type { PartitionBounds } from '../domain/types';

/**
 * A chunk's output keys, least and greatest (the first key column's, as text; null when the
 * chunk has no output rows): read once after the fill (`CompiledRun.outputKeyRange`) and bound
 * into the statements that meet the target, instead of each of them scanning the output table
 * twice for its min() and max().
 */
export interface OutputKeyRange {
  lo: string | null;
  hi: string | null;
}

export interface TargetJoin {
  /** The target, quoted. */
  target: string;
  /** The session's output table, `pg_temp.…`. */
  out: string;
  /** The output's columns, quoted, in order. */
  cols: string[];
  keyCols: string[];
  /** Output columns that are not key columns: what an update writes. */
  valueCols: string[];
  /** Target row t and output row o are the same row (compared in the target key's own collation, see RunShape). */
  join: string;
  /**
   * `join`, plus: t's key lies within the key range of `rows`, a computed row set aliased o (a
   * check's recomputed page). Implied by the join, but saying so lets the planner read only that
   * slice of the target's index instead of hashing the whole target. Not for a text key: a
   * computed row set may sort in another collation than the target column.
   */
  joinWithin(rows: string): string;
  /**
   * The chunk's form of `joinWithin`, on the output table: its key range, read once a chunk,
   * bound as two parameters. The output table is created from the target, so its min() and
   * max() follow the target column's collation, text keys included. Without a range (a key type
   * whose min() and max() do not follow its order, or none was read): `join` alone.
   */
  joinInRange(range: OutputKeyRange | null, param: Param): string;
  /** Target row t's key lies within the chunk output's key range: the bound `joinInRange` adds; null where it adds none. */
  keyInRange(range: OutputKeyRange | null, param: Param): string | null;
  /** Whether the chunk's statements take an OutputKeyRange: the target key's type has min() and max() that agree with its index. */
  ranged: boolean;
  /** Target row t holds other values than output row o. */
  changed: string;
  /** Output row o's key as text, for messages. */
  keyText: string;
  /** No target row t joined output row o. */
  absent: string;
}

export function targetJoin(spec: ResolvedSpec, shape: RunShape): TargetJoin {
  const keyCols = spec.target.key.map(quoteIdent);
  const valueCols = shape.outputColumns.filter((c) => !spec.target.key.includes(c)).map(quoteIdent);
  const join = keyCols.map((c, i) => `t.${c} = o.${c}${shape.targetKeyCollations?.[i] ? ` COLLATE ${shape.targetKeyCollations[i]}` : ''}`).join(' AND ');
  // the output table is created from the target: its keys have the target column's type and
  // collation, so its min() and max() bound the target's index; the parameters are cast without
  // a type modifier, which holds any value of the column
  const rangeType = shape.targetKeyType && hasMinMax(shape.targetKeyType) ? shape.targetKeyType.replace(/\(\d+(,\d+)?\)/, '') : undefined;
  const keyInRange = (range: OutputKeyRange | null, param: Param): string | null =>
    rangeType && range ? `t.${keyCols[0]} >= ${param(range.lo, rangeType)} AND t.${keyCols[0]} <= ${param(range.hi, rangeType)}` : null;
  return {
    target: quoteTable(spec.target.table),
    out: `pg_temp.${outputTableName(spec, shape)}`,
    cols: shape.outputColumns.map(quoteIdent),
    keyCols,
    valueCols,
    join,
    joinWithin: (rows) =>
      shape.targetKeyType && hasMinMax(shape.targetKeyType) && !COLLATABLE.test(shape.targetKeyType)
        ? `${join} AND t.${keyCols[0]} >= (SELECT min(${keyCols[0]}) FROM ${rows}) AND t.${keyCols[0]} <= (SELECT max(${keyCols[0]}) FROM ${rows})`
        : join,
    joinInRange: (range, param) => {
      const bound = keyInRange(range, param);
      return bound ? `${join} AND ${bound}` : join;
    },
    keyInRange,
    ranged: rangeType !== undefined,
    changed: valueCols.length > 0 ? `(${valueCols.map((c) => `t.${c}`).join(', ')}) IS DISTINCT FROM (${valueCols.map((c) => `o.${c}`).join(', ')})` : 'false',
    keyText: keyCols.length === 1 ? `o.${keyCols[0]}::text` : `row(${keyCols.map((c) => `o.${c}`).join(', ')})::text`,
    absent: `t.${keyCols[0]} IS NULL`,
  };
}

/**
 * Replace mode: target row t belongs to the partition `bounds` (by target.partitionColumn) — the
 * rows a replace partition owns, deletes when the transform no longer produces them, and images.
 */
export function targetPartitionScope(spec: ResolvedSpec, shape: RunShape, bounds: PartitionBounds, alias: string, param: Param): string {
  const column = spec.target.partitionColumn!;
  return partitionPredicate({ ...bounds, column } as PartitionBounds, alias, shape.targetPartitionColumnType ?? shape.partitionColumnType, param);
}

const COLLATABLE = /^(text|character varying)/;
