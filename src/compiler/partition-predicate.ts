/**
 * A partition's bounds as SQL: the predicate statements put on a partition's rows, the
 * bounds as an operator reads them, and the numbered parameters both fill. Half-open, so a
 * row on a boundary belongs to exactly one partition.
 */
import { quoteIdent } from '../db/sql';
import type { PartitionBounds } from '../domain/types';

export type Param = (value: unknown, type: string) => string;

/** Numbered, typed parameters for one statement: `param(v, 'bigint')` -> `$1::bigint`. */
export function params(): { values: unknown[]; param: Param } {
  const values: unknown[] = [];
  return {
    values,
    param: (v, type) => {
      values.push(v);
      return `$${values.length}::${type}`;
    },
  };
}

const INTEGER_RANGES: Record<string, { min: bigint; max: bigint }> = {
  smallint: { min: -32768n, max: 32767n },
  integer: { min: -2147483648n, max: 2147483647n },
  bigint: { min: -9223372036854775808n, max: 9223372036854775807n },
};

/**
 * Which ends of [lo, hi) a value of `type` can cross. The first and last range partitions may
 * reach past the type's range (partitions are aligned to multiples of size): a bound no value
 * can cross is left out of SQL, where it could not even be cast.
 */
export function crossableEnds(type: string, lo: string, hi: string): { lo: boolean; hi: boolean } {
  const limits = INTEGER_RANGES[type];
  return { lo: !(limits && BigInt(lo) <= limits.min), hi: !(limits && BigInt(hi) > limits.max) };
}

/**
 * `keyType` is source.key's first column's type (RunShape.keyType), which bounds a piece of a cut
 * leaf; only statements on the source meet such a piece.
 */
export function partitionPredicate(bounds: PartitionBounds, alias: string, columnType: string, param: Param, keyType?: string): string {
  const col = `${alias}.${quoteIdent(bounds.column)}`;
  switch (bounds.kind) {
    case 'range': {
      const ends = crossableEnds(columnType, bounds.lo, bounds.hi);
      const parts = [...(ends.lo ? [`${col} >= ${param(bounds.lo, columnType)}`] : []), ...(ends.hi ? [`${col} < ${param(bounds.hi, columnType)}`] : [])];
      return parts.length > 0 ? parts.join(' AND ') : `${col} IS NOT NULL`;
    }
    case 'time':
      return `${col} >= ${timeBound(bounds, bounds.lo, columnType, param)} AND ${col} < ${timeBound(bounds, bounds.hi, columnType, param)}`;
    case 'list':
      return `${col} = ${param(bounds.value, columnType)}`;
    case 'span': {
      const parts = [
        ...(bounds.lo !== null ? [`${col} >= ${param(bounds.lo, columnType)}`] : []),
        ...(bounds.hi !== null ? [`${col} < ${param(bounds.hi, columnType)}`] : []),
      ];
      return parts.length > 0 ? parts.join(' AND ') : `${col} IS NOT NULL`;
    }
    case 'leaf': {
      // the catalog's own text, bare so the planner prunes to the leaf (a partition constraint is
      // never NULL); it names the column unqualified, and every statement reads the source alone here
      const leaf = `(${bounds.constraint})`;
      if (!bounds.split) return leaf;
      if (!keyType) throw new Error(`partition ${bounds.leaf} is a piece of a leaf, bounded by source.key, whose type was not given`);
      const key = `${alias}.${quoteIdent(bounds.split.column)}`;
      const { lo, hi } = bounds.split;
      return [leaf, ...(lo !== null ? [`${key} >= ${param(lo, keyType)}`] : []), ...(hi !== null ? [`${key} < ${param(hi, keyType)}`] : [])].join(' AND ');
    }
    case 'null':
      return `${col} IS NULL`;
  }
}

/**
 * A time bound (a UTC instant) as the column compares it. Bounds cut in a named zone's calendar
 * meet a `date` or `timestamp` column as that zone's local time, so a New York day holds the
 * rows dated that day; a timestamptz column compares instants (and, without a zone, a date or
 * timestamp is read as UTC, the sessions' time zone).
 */
export function timeBound(bounds: { timeZone?: string }, instant: string, columnType: string, param: Param): string {
  if (!bounds.timeZone || /^timestamp(\(\d+\))? with time zone/.test(columnType)) return param(instant, 'timestamptz');
  return `(${param(instant, 'timestamptz')} AT TIME ZONE ${param(bounds.timeZone, 'text')})`;
}

/** A partition's bounds as a condition an operator can read: `created_at >= 2024-03-01T00:00:00.000Z and < …`. */
export function boundsText(bounds: PartitionBounds): string {
  if (!bounds.stretch) return planBoundsText(bounds);
  // the keys it was cut at are row data: the ledger holds them (backfill partitions -o json)
  const { after, through } = bounds.stretch;
  const part = after === null ? 'up to the key where it was cut' : through === null ? 'after the key where it was cut' : 'between the keys where it was cut';
  return `${planBoundsText(bounds)}: its rows ${part} while running (limits.splitTail; keys in the ledger)`;
}

function planBoundsText(bounds: PartitionBounds): string {
  switch (bounds.kind) {
    case 'range':
      return `${bounds.column} >= ${bounds.lo} and < ${bounds.hi}`;
    case 'time':
      return `${bounds.column} >= ${bounds.lo} and < ${bounds.hi}${bounds.timeZone ? ` (${bounds.timeZone} calendar)` : ''}`;
    case 'list':
      return `${bounds.column} = ${bounds.value}`;
    case 'leaf':
      return bounds.split
        ? // row data: the ledger holds the values (backfill status)
          `the rows of leaf partition ${bounds.leaf} in range ${bounds.split.piece} of ${bounds.split.column} (about equal rows; values in the ledger)`
        : `the rows of leaf partition ${bounds.leaf}`;
    case 'span':
      // row data: the ledger holds the values (backfill status)
      return `${bounds.column} in a range of about equal rows (values in the ledger)`;
    case 'null':
      return `${bounds.column} IS NULL`;
  }
}
