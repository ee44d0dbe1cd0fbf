/**
 * The proof a run checks before it may end `succeeded`: the ledger holds exactly the planned
 * partitions, their bounds tile the scope (no gap, no overlap, one NULL partition at most),
 * and each partition completed exactly once. Pure: given the ledger's rows, it says what is
 * wrong, if anything.
 */
import type { PartitionStatus } from '../shared/statuses';
import type { PartitionBounds } from '../shared/types';

export interface LedgerPartition {
  partition_id: string;
  ordinal: number;
  bounds: PartitionBounds;
  status: PartitionStatus;
  completions: number;
}

export function completenessProblems(planned: number, partitions: LedgerPartition[]): string[] {
  const problems: string[] = [];
  if (partitions.length !== planned) problems.push(`the ledger holds ${partitions.length} partitions but the plan had ${planned}`);
  const byOrdinal = [...partitions].sort((a, b) => a.ordinal - b.ordinal);
  // the first break in the numbering is the one to name: every later partition shifts with it
  const misplaced = byOrdinal.findIndex((p, i) => p.ordinal !== i);
  if (misplaced !== -1) {
    const p = byOrdinal[misplaced];
    problems.push(`partition ${p.partition_id} is number ${p.ordinal} of the plan where ${misplaced} was expected (a partition is missing before it)`);
  }
  const nulls = byOrdinal.filter((p) => p.bounds.kind === 'null');
  if (nulls.length > 1) problems.push(`${nulls.length} partitions claim the NULL rows`);
  const bounded = byOrdinal.filter((p) => p.bounds.kind !== 'null');
  const seenValues = new Set<string>();
  for (let i = 0; i < bounded.length; i++) {
    const { bounds, partition_id: id } = bounded[i];
    if (bounds.kind === 'list') {
      if (seenValues.has(bounds.value)) problems.push(`partition ${id} repeats a value another partition covers`);
      seenValues.add(bounds.value);
    } else if (bounds.kind === 'leaf') {
      const previous = bounded[i - 1]?.bounds;
      const next = bounded[i + 1]?.bounds;
      const sameLeaf = (b: typeof previous) => b?.kind === 'leaf' && b.leaf === bounds.leaf;
      if (!bounds.split) {
        if (seenValues.has(`leaf ${bounds.leaf}`)) problems.push(`partition ${id} repeats leaf ${bounds.leaf}`);
        seenValues.add(`leaf ${bounds.leaf}`);
        continue;
      }
      // the pieces of a cut leaf follow each other and cover it: open at its ends, each starting where the one before ends
      const continues = sameLeaf(previous);
      if (!continues && seenValues.has(`leaf ${bounds.leaf}`)) problems.push(`partition ${id} repeats leaf ${bounds.leaf}`);
      seenValues.add(`leaf ${bounds.leaf}`);
      const before = continues && previous?.kind === 'leaf' ? previous.split : undefined;
      if (continues && !before) problems.push(`partition ${id} cuts leaf ${bounds.leaf}, which the partition before it holds whole`);
      if (!continues && bounds.split.lo !== null) problems.push(`partition ${id} leaves the lowest keys of leaf ${bounds.leaf} without a partition`);
      if (!sameLeaf(next) && bounds.split.hi !== null) problems.push(`partition ${id} leaves the highest keys of leaf ${bounds.leaf} without a partition`);
      if (before && before.hi !== bounds.split.lo)
        problems.push(`partition ${id} does not start where the one before it in leaf ${bounds.leaf} ends: a gap or an overlap`);
    } else if (bounds.kind === 'span') {
      const previous = bounded[i - 1]?.bounds;
      const first = i === 0;
      const last = i === bounded.length - 1;
      if ((first && bounds.lo !== null) || (last && bounds.hi !== null))
        problems.push(`partition ${id} leaves the ${first ? 'lowest' : 'highest'} values without a partition`);
      if (previous && (previous.kind !== 'span' || previous.hi !== bounds.lo))
        problems.push(`partition ${id} does not start where the one before it ends: a gap or an overlap`);
    } else if (bounds.kind === 'range' || bounds.kind === 'time') {
      const previous = bounded[i - 1]?.bounds;
      if (previous && (previous.kind === 'range' || previous.kind === 'time') && !sameBound(previous.hi, bounds.lo, bounds.kind)) {
        problems.push(
          `partition ${id} starts at ${bounds.lo} but the one before it ends at ${previous.hi}: ${boundOrder(previous.hi, bounds.lo, bounds.kind) < 0 ? 'a gap' : 'an overlap'}`,
        );
      }
    }
  }
  for (const p of byOrdinal) {
    if (p.status === 'succeeded' && p.completions !== 1) problems.push(`partition ${p.partition_id} completed ${p.completions} times`);
  }
  return problems;
}

function boundOrder(a: string, b: string, kind: 'range' | 'time'): number {
  if (kind === 'range') {
    const d = BigInt(a) - BigInt(b);
    return d === 0n ? 0 : d < 0n ? -1 : 1;
  }
  return Date.parse(a) - Date.parse(b);
}

function sameBound(a: string, b: string, kind: 'range' | 'time'): boolean {
  return boundOrder(a, b, kind) === 0;
}
