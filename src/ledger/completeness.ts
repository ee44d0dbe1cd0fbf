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

/**
 * `subset`: a run of part of the plan on purpose (`start --partition`, `--from/--to`,
 * `--only-stale`): the ledger must hold exactly its partitions, and partitions that neighbour each
 * other in the plan must still meet; where the subset skips partitions, nothing is claimed.
 */
export function completenessProblems(planned: number, ledger: LedgerPartition[], subset?: PlanSubset): string[] {
  const { partitions, problems } = foldSplits(ledger);
  if (partitions.length !== planned) problems.push(`the ledger holds ${partitions.length} partitions but the plan had ${planned}`);
  const byOrdinal = [...partitions].sort((a, b) => a.ordinal - b.ordinal);
  // the first break in the numbering is the one to name: every later partition shifts with it
  const misplaced = byOrdinal.findIndex((p, i) => p.ordinal !== i);
  if (misplaced !== -1) {
    const p = byOrdinal[misplaced];
    problems.push(`partition ${p.partition_id} is number ${p.ordinal} of the plan where ${misplaced} was expected (a partition is missing before it)`);
  }
  if (subset) problems.push(...subsetProblems(byOrdinal, subset));
  const nulls = byOrdinal.filter((p) => p.bounds.kind === 'null');
  if (nulls.length > 1) problems.push(`${nulls.length} partitions claim the NULL rows`);
  const seenValues = new Set<string>();
  for (const group of neighbours(
    byOrdinal.filter((p) => p.bounds.kind !== 'null'),
    subset,
  ))
    problems.push(...tilingProblems(group, seenValues));
  for (const p of ledger) {
    if (p.status === 'succeeded' && p.completions !== 1) problems.push(`partition ${p.partition_id} completed ${p.completions} times`);
  }
  return problems;
}

/** What the completeness proof needs of a run's subset (compiler/subset.ts RunSubset). */
export interface PlanSubset {
  partitions: { id: string; planOrdinal: number }[];
  /** The plan's place of its last partition of values (a NULL partition, if any, comes after it). */
  lastBoundedPlace: number;
}

function subsetProblems(partitions: LedgerPartition[], subset: PlanSubset): string[] {
  const held = partitions.map((p) => p.partition_id);
  const wanted = subset.partitions.map((p) => p.id);
  const missing = wanted.filter((id) => !held.includes(id));
  const extra = held.filter((id) => !wanted.includes(id));
  return [
    ...missing.map((id) => `partition ${id} of the run's subset is not in the ledger`),
    ...extra.map((id) => `partition ${id} is in the ledger but not in the run's subset`),
    ...(missing.length === 0 && extra.length === 0 && held.some((id, i) => id !== wanted[i])
      ? ["the ledger holds the subset's partitions in another order than the plan's"]
      : []),
  ];
}

/** A group of partitions, in order, each next to the one before it in the plan; whether the group reaches the plan's first and last. */
interface Neighbours {
  partitions: LedgerPartition[];
  atPlanStart: boolean;
  atPlanEnd: boolean;
}

function neighbours(bounded: LedgerPartition[], subset: PlanSubset | undefined): Neighbours[] {
  if (!subset) return [{ partitions: bounded, atPlanStart: true, atPlanEnd: true }];
  const placeOf = new Map(subset.partitions.map((p) => [p.id, p.planOrdinal]));
  const place = (p: LedgerPartition) => placeOf.get(p.partition_id) ?? -1;
  const groups: Neighbours[] = [];
  for (const p of bounded) {
    const group = groups[groups.length - 1];
    const previous = group?.partitions[group.partitions.length - 1];
    if (group && previous && place(p) === place(previous) + 1) group.partitions.push(p);
    else groups.push({ partitions: [p], atPlanStart: place(p) === 0, atPlanEnd: false });
  }
  for (const g of groups) g.atPlanEnd = place(g.partitions[g.partitions.length - 1]) === subset.lastBoundedPlace;
  return groups;
}

function tilingProblems({ partitions: bounded, atPlanStart, atPlanEnd }: Neighbours, seenValues: Set<string>): string[] {
  const problems: string[] = [];
  for (let i = 0; i < bounded.length; i++) {
    const { bounds, partition_id: id } = bounded[i];
    const first = i === 0;
    const last = i === bounded.length - 1;
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
      // a subset may hold some pieces of a leaf on purpose: its ends are claimed only where the group reaches the plan's
      if (!continues && bounds.split.lo !== null && (!first || atPlanStart))
        problems.push(`partition ${id} leaves the lowest keys of leaf ${bounds.leaf} without a partition`);
      if (!sameLeaf(next) && bounds.split.hi !== null && (!last || atPlanEnd))
        problems.push(`partition ${id} leaves the highest keys of leaf ${bounds.leaf} without a partition`);
      if (before && before.hi !== bounds.split.lo)
        problems.push(`partition ${id} does not start where the one before it in leaf ${bounds.leaf} ends: a gap or an overlap`);
    } else if (bounds.kind === 'span') {
      const previous = bounded[i - 1]?.bounds;
      if ((first && atPlanStart && bounds.lo !== null) || (last && atPlanEnd && bounds.hi !== null))
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
