/**
 * Pure planning: spec.partition + facts about the source -> the ordered list of
 * partitions. Deterministic: the same spec and the same facts give the same ids,
 * bounds and order. Bounds are half-open [lo, hi) so adjacent partitions never share
 * a row, and a NULL partition is planned when the column has NULLs so that no row in
 * scope falls outside every partition.
 */
import { DateTime } from 'luxon';
import { partitionId } from '../domain/ids';
import { MAX_PARTITIONS } from '../domain/limits';
import type { PartitionBounds, PlannedPartition } from '../domain/types';
import type { TimeUnit } from '../specs/schema';
import type { ResolvedPartition } from '../specs/resolve';

/** What the planner needs to know about the source, gathered by one query per spec. */
export type SourceFacts =
  | { kind: 'range'; min: string | null; max: string | null; hasNulls: boolean }
  /** `count` partitions: the column's quantiles at 1/count, 2/count, … (as its text, ascending), from the source or a sample of it. */
  | { kind: 'quantiles'; cuts: string[]; hasNulls: boolean }
  | { kind: 'time'; min: string | null; max: string | null; hasNulls: boolean }
  | { kind: 'list'; values: string[]; hasNulls: boolean }
  /**
   * The source's leaf partitions, in name order, with their partition constraints; a leaf to be
   * cut (`partition.rows`) has the quantiles of `splitColumn` (source.key's first) that cut it.
   */
  | { kind: 'leaves'; leaves: { name: string; constraint: string; cuts?: string[] }[]; splitColumn?: string };

/** Beyond this the parent's ledger paging still works, but the plan is almost surely a typo in size. */
export { MAX_PARTITIONS };

export class PlanError extends Error {
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(message);
    this.name = 'PlanError';
  }
}

export function planPartitions(partition: ResolvedPartition, facts: SourceFacts): PlannedPartition[] {
  const bounds = planBounds(partition, facts);
  const unit = partition.by === 'time' ? partition.interval.unit : undefined;
  return bounds.map((b, ordinal) => ({ id: partitionId(b, unit, ordinal), ordinal, bounds: b }));
}

function planBounds(partition: ResolvedPartition, facts: SourceFacts): PartitionBounds[] {
  const column = partition.column;
  if (partition.by === 'native') {
    if (facts.kind !== 'leaves') throw new Error('native partitions need the leaves');
    if (facts.leaves.length === 0)
      throw new PlanError('partition.by', 'is native, but the source has no leaf partitions to plan; attach partitions, or partition by range or time');
    // leaves cover every row the table can hold, NULLs included (in a list or default leaf);
    // the pieces of a cut leaf cover it, open at both ends (a key column is never NULL)
    const planned = facts.leaves.flatMap((l): PartitionBounds[] => {
      const leaf = { kind: 'leaf' as const, column, leaf: l.name, constraint: l.constraint };
      if (!l.cuts?.length || !facts.splitColumn) return [leaf];
      const splitColumn = facts.splitColumn;
      return openRanges(l.cuts).map(({ lo, hi }, i) => ({ ...leaf, split: { column: splitColumn, lo, hi, piece: i + 1 } }));
    });
    if (planned.length > MAX_PARTITIONS) {
      throw new PlanError('partition.rows', `would cut the leaves into ${planned.length} partitions (more than ${MAX_PARTITIONS}); use a larger rows`);
    }
    return planned;
  }
  const nulls: PartitionBounds[] = 'hasNulls' in facts && facts.hasNulls ? [{ kind: 'null', column }] : [];
  switch (partition.by) {
    case 'range': {
      if (partition.count !== undefined) {
        if (facts.kind !== 'quantiles') throw new Error('range partitions by count need quantile facts');
        return [...spanBounds(column, facts.cuts), ...nulls];
      }
      if (facts.kind !== 'range') throw new Error('range partition needs range facts');
      if (facts.min === null || facts.max === null) return nulls;
      return [...rangeBounds(column, BigInt(partition.size!), BigInt(facts.min), BigInt(facts.max)), ...nulls];
    }
    case 'time': {
      if (facts.kind !== 'time') throw new Error('time partition needs time facts');
      if (facts.min === null || facts.max === null) return nulls;
      const { count, unit } = partition.interval;
      return [...timeBounds(column, count, unit, facts.min, facts.max, partition.timeZone), ...nulls];
    }
    case 'list': {
      if (facts.kind !== 'list') throw new Error('list partition needs list facts');
      const given = partition.values?.map(String);
      const values = given ?? facts.values;
      const unique = [...new Set(values)];
      if (unique.length > MAX_PARTITIONS) {
        throw new PlanError(
          'partition.column',
          `has more than ${MAX_PARTITIONS} distinct values in scope (one partition each); partition by range or time, or narrow source.where`,
        );
      }
      const listed: PartitionBounds[] = unique.map((value) => ({ kind: 'list', column, value }));
      // explicitly listed values bound the scope; discovered values must cover every row
      return given ? listed : [...listed, ...nulls];
    }
  }
}

/**
 * Ranges between consecutive cuts, open at both ends so a row beyond the sampled extremes (or
 * written after the plan) still has a partition. A value that fills several quantiles is one
 * cut: that partition is bigger, never empty twice.
 */
function spanBounds(column: string, cuts: string[]): PartitionBounds[] {
  return openRanges(cuts).map(({ lo, hi }) => ({ kind: 'span' as const, column, lo, hi }));
}

/** Ranges between ascending cuts, open below the first and above the last; a repeated cut is one edge. */
function openRanges(cuts: string[]): { lo: string | null; hi: string | null }[] {
  const distinct = cuts.filter((c, i) => i === 0 || c !== cuts[i - 1]);
  const edges = [null, ...distinct, null];
  return edges.slice(0, -1).map((lo, i) => ({ lo, hi: edges[i + 1] }));
}

function floorDiv(a: bigint, b: bigint): bigint {
  const q = a / b;
  return a % b !== 0n && a < 0n !== b < 0n ? q - 1n : q;
}

function rangeBounds(column: string, size: bigint, min: bigint, max: bigint): PartitionBounds[] {
  // aligned to multiples of size, so ids do not shift when the smallest key changes
  const first = floorDiv(min, size) * size;
  const count = floorDiv(max, size) - floorDiv(min, size) + 1n;
  if (count > BigInt(MAX_PARTITIONS)) {
    throw new PlanError('partition.size', `would make ${count} partitions over ${column} ${min}..${max} (more than ${MAX_PARTITIONS}); use a larger size`);
  }
  const out: PartitionBounds[] = [];
  for (let lo = first; lo <= max; lo += size) {
    out.push({ kind: 'range', column, lo: lo.toString(), hi: (lo + size).toString() });
  }
  return out;
}

/** Start of the unit containing `at` in `zone`'s calendar (weeks start on Monday, as ISO weeks do). */
export function startOfUnit(at: DateTime, unit: TimeUnit): DateTime {
  return at.startOf(unit);
}

/** `count` units after `at`: minutes and hours are elapsed time; days, weeks and months follow the zone's calendar (a DST day has 23 or 25 hours). */
export function addUnits(at: DateTime, count: number, unit: TimeUnit): DateTime {
  return at.plus({ [`${unit}s`]: count });
}

function timeBounds(column: string, count: number, unit: TimeUnit, min: string, max: string, zone: string | undefined): PartitionBounds[] {
  const out: PartitionBounds[] = [];
  const at = (iso: string) => DateTime.fromISO(iso, { zone: zone ?? 'UTC' });
  const last = at(max);
  const utc = (d: DateTime) => d.toJSDate().toISOString();
  for (let lo = startOfUnit(at(min), unit); lo <= last; lo = addUnits(lo, count, unit)) {
    if (out.length >= MAX_PARTITIONS) {
      throw new PlanError('partition.size', `would make more than ${MAX_PARTITIONS} partitions over ${column}; use a larger interval`);
    }
    out.push({ kind: 'time', column, lo: utc(lo), hi: utc(addUnits(lo, count, unit)), ...(zone ? { timeZone: zone } : {}) });
  }
  return out;
}
