/**
 * The proof a run checks before it may end `succeeded`: the ledger holds exactly the planned
 * partitions, their bounds tile the scope (no gap, no overlap, one NULL partition at most),
 * and each partition completed exactly once. A partition split while it ran (`limits.splitTail`)
 * counts as the planned partition it was cut from, once its parts are shown to cover that
 * partition's keys exactly once. Pure: given the ledger's rows, it says what is wrong, if anything.
 */
import type { PartitionStatus } from '../domain/statuses';
import type { PartitionBounds } from '../domain/types';

export interface LedgerPartition {
  partition_id: string;
  ordinal: number;
  bounds: PartitionBounds;
  status: PartitionStatus;
  completions: number;
  /** The partition this one was cut from while it ran; null for the plan's own. */
  split_from?: string | null;
}

export function completenessProblems(planned: number, ledger: LedgerPartition[]): string[] {
  const { partitions, problems } = foldSplits(ledger);
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
  for (const p of ledger) {
    if (p.status === 'succeeded' && p.completions !== 1) problems.push(`partition ${p.partition_id} completed ${p.completions} times`);
  }
  return problems;
}

/**
 * The plan's partitions as the plan had them, each split one with its stretch of keys removed,
 * after checking that it and the parts split from it (and from them) cover its keys exactly
 * once: one part starts at its first key, each next part after the key the one before it ends
 * at, and one reaches its last. Keys are row data, so problems name partitions only.
 */
function foldSplits(ledger: LedgerPartition[]): { partitions: LedgerPartition[]; problems: string[] } {
  const problems: string[] = [];
  const byId = new Map(ledger.map((p) => [p.partition_id, p]));
  const families = new Map<string, LedgerPartition[]>();
  for (const p of ledger) {
    let root = p;
    const seen = new Set<string>();
    while (root.split_from) {
      const from = byId.get(root.split_from);
      if (!from || seen.has(root.partition_id)) {
        problems.push(`partition ${p.partition_id} was split from ${root.split_from}, which the ledger does not hold`);
        break;
      }
      seen.add(root.partition_id);
      root = from;
    }
    if (root.split_from) continue;
    families.set(root.partition_id, [...(families.get(root.partition_id) ?? []), p]);
  }
  const partitions: LedgerPartition[] = [];
  for (const [rootId, family] of families) {
    const root = byId.get(rootId)!;
    if (family.length === 1 && !root.bounds.stretch) {
      partitions.push(root);
      continue;
    }
    const left = new Set(family);
    let at: string | null = null;
    let broken = false;
    do {
      const part = [...left].find((p) => (p.bounds.stretch?.after ?? null) === at);
      if (!part) {
        broken = true;
        break;
      }
      left.delete(part);
      at = part.bounds.stretch?.through ?? null;
    } while (at !== null);
    if (broken || left.size > 0) {
      problems.push(`partition ${rootId} and the partitions split from it do not cover its keys exactly once: a gap or an overlap between the parts`);
    }
    const { stretch: _stretch, ...planned } = root.bounds;
    partitions.push({ ...root, bounds: planned as PartitionBounds });
  }
  return { partitions, problems };
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
