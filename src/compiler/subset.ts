/**
 * A subset of the plan on purpose (docs/operating.md "Run part of the plan"): `--partition ID…` names
 * partitions of the plan, `--from X --to Y` takes the partitions whose bounds meet [X, Y) on the
 * partition column (range and time plans). The partition stays the unit of work, so a subset is
 * always whole partitions of the plan, their ids and bounds unchanged, renumbered in plan order;
 * what it covers is said exactly, and where that is wider than asked, said so. The run records the
 * subset and its proof of completeness covers exactly it (ledger/completeness.ts). Pure.
 */
import { DateTime } from 'luxon';
import type { PlannedPartition } from '../domain/types';

/** What the operator asked for. */
export interface SubsetRequest {
  partitions?: string[];
  from?: string;
  to?: string;
}

/** The subset as a run records it (runs.subset). */
export interface RunSubset {
  /** As asked, for the record. */
  asked: SubsetRequest | { onlyStale: true };
  /** Its partitions in plan order, each with its place in the whole plan (the proof checks tiling between neighbours). */
  partitions: { id: string; planOrdinal: number }[];
  /** Partitions in the whole plan. */
  ofPlanned: number;
  /** The plan's place of its last partition of values (a NULL partition, if any, comes after it): the proof's "last". */
  lastBoundedPlace: number;
  /** What it covers on the partition column, [from, to), when its partitions are one stretch of a range or time plan. */
  covers?: { from: string; to: string };
}

export type SubsetSelection = { ok: true; partitions: PlannedPartition[]; subset: RunSubset; warnings: string[] } | { ok: false; problems: string[] };

export function isSubsetRequest(request: SubsetRequest | undefined): request is SubsetRequest {
  return request !== undefined && ((request.partitions?.length ?? 0) > 0 || request.from !== undefined || request.to !== undefined);
}

/** `planned`: the whole plan, in plan order. */
export function selectSubset(planned: PlannedPartition[], request: SubsetRequest): SubsetSelection {
  const byRange = request.from !== undefined || request.to !== undefined;
  if (byRange && (request.partitions?.length ?? 0) > 0)
    return { ok: false, problems: ['give --partition or --from/--to, not both: a subset is named one way'] };
  const chosen = byRange ? inRange(planned, request.from, request.to) : named(planned, request.partitions ?? []);
  if (!chosen.ok) return chosen;
  const ids = new Set(chosen.partitions.map((p) => p.id));
  const { partitions, subset } = chosenSubset(planned, (p) => ids.has(p.id), request);
  const covers = subset.covers;
  return {
    ok: true,
    partitions,
    subset,
    warnings: byRange && covers ? widerThanAsked(covers, request, chosen.partitions[0]) : [],
  };
}

/** `start --only-stale`: the plan's partitions that `keep` holds, recorded as a subset so the proof covers exactly them. */
export function chosenSubset(
  planned: PlannedPartition[],
  keep: (p: PlannedPartition) => boolean,
  asked: RunSubset['asked'],
): { partitions: PlannedPartition[]; subset: RunSubset } {
  const chosen = planned.filter(keep);
  const covers = stretchOf(chosen);
  return {
    partitions: chosen.map((p, ordinal) => ({ ...p, ordinal })),
    subset: {
      asked,
      partitions: chosen.map((p) => ({ id: p.id, planOrdinal: p.ordinal })),
      ofPlanned: planned.length,
      lastBoundedPlace: lastBoundedPlace(planned),
      ...(covers ? { covers } : {}),
    },
  };
}

/** "2 of the plan's 40 partitions (--from 2024-03-01 --to 2024-03-03), covering [lo, hi)", for status, report and plan. */
export function describeSubset(subset: RunSubset): string {
  const a = subset.asked;
  const how =
    'onlyStale' in a
      ? 'the ones stale when it started'
      : a.partitions?.length
        ? `--partition ${a.partitions.join(' ')}`
        : [a.from !== undefined ? `--from ${a.from}` : '', a.to !== undefined ? `--to ${a.to}` : ''].filter(Boolean).join(' ');
  const covers = subset.covers ? `, covering [${subset.covers.from}, ${subset.covers.to})` : '';
  return `${subset.partitions.length} of the plan's ${subset.ofPlanned} partitions (${how})${covers}`;
}

export function lastBoundedPlace(planned: PlannedPartition[]): number {
  for (let i = planned.length - 1; i >= 0; i--) if (planned[i].bounds.kind !== 'null') return planned[i].ordinal;
  return -1;
}

function named(planned: PlannedPartition[], ids: string[]): { ok: true; partitions: PlannedPartition[] } | { ok: false; problems: string[] } {
  const wanted = new Set(ids);
  const unknown = ids.filter((id) => !planned.some((p) => p.id === id));
  if (unknown.length > 0) {
    const first = planned[0]?.id;
    const last = planned[planned.length - 1]?.id;
    return {
      ok: false,
      problems: unknown.map(
        (id) => `--partition ${id}: not a partition of the plan (its ${planned.length} partitions run from ${first} to ${last}; backfill plan lists them)`,
      ),
    };
  }
  return { ok: true, partitions: planned.filter((p) => wanted.has(p.id)) };
}

function inRange(
  planned: PlannedPartition[],
  from: string | undefined,
  to: string | undefined,
): { ok: true; partitions: PlannedPartition[] } | { ok: false; problems: string[] } {
  const bounded = planned.filter((p) => p.bounds.kind !== 'null');
  const kind = bounded[0]?.bounds.kind;
  if ((kind !== 'range' && kind !== 'time') || bounded.some((p) => p.bounds.kind !== kind))
    return {
      ok: false,
      problems: [
        `--from/--to select on a range or time plan's bounds; this plan's partitions are ${kind ?? 'none'}: name them with --partition (backfill plan lists them)`,
      ],
    };
  const order: Order<bigint | number> = kind === 'range' ? integerOrder : timeOrder(timeZoneOf(bounded[0]));
  const problems: string[] = [];
  const lo = from === undefined ? undefined : order.parse(from, '--from', problems);
  const hi = to === undefined ? undefined : order.parse(to, '--to', problems);
  if (problems.length > 0) return { ok: false, problems };
  if (lo !== undefined && hi !== undefined && order.compare(lo, hi) >= 0) return { ok: false, problems: [`--from ${from} is not before --to ${to}`] };
  const meets = (p: PlannedPartition) => {
    const b = p.bounds as { lo: string; hi: string };
    // [b.lo, b.hi) meets [lo, hi)
    return (hi === undefined || order.compare(order.parse(b.lo), hi) < 0) && (lo === undefined || order.compare(order.parse(b.hi), lo) > 0);
  };
  const partitions = bounded.filter(meets);
  if (partitions.length === 0) {
    const b0 = bounded[0]?.bounds as { lo: string } | undefined;
    const bn = bounded[bounded.length - 1]?.bounds as { hi: string } | undefined;
    return {
      ok: false,
      problems: [`no partition of the plan meets [${from ?? '…'}, ${to ?? '…'}): the plan covers [${b0?.lo ?? '…'}, ${bn?.hi ?? '…'})`],
    };
  }
  return { ok: true, partitions };
}

/** [from, to) of the chosen partitions when they are one unbroken stretch of the plan's range or time partitions. */
function stretchOf(chosen: PlannedPartition[]): RunSubset['covers'] | undefined {
  const first = chosen[0]?.bounds;
  const last = chosen[chosen.length - 1]?.bounds;
  if (!first || !last || (first.kind !== 'range' && first.kind !== 'time') || (last.kind !== 'range' && last.kind !== 'time')) return undefined;
  const unbroken = chosen.every((p, i) => i === 0 || p.ordinal === chosen[i - 1].ordinal + 1) && chosen.every((p) => p.bounds.kind === first.kind);
  return unbroken ? { from: first.lo, to: last.hi } : undefined;
}

function widerThanAsked(covers: { from: string; to: string }, request: SubsetRequest, first: PlannedPartition): string[] {
  const kind = first.bounds.kind;
  const order: Order<bigint | number> = kind === 'range' ? integerOrder : timeOrder(timeZoneOf(first));
  const wider =
    (request.from !== undefined && order.compare(order.parse(covers.from), order.parse(request.from)) < 0) ||
    (request.to !== undefined && order.compare(order.parse(covers.to), order.parse(request.to)) > 0);
  return wider
    ? [
        `the subset covers [${covers.from}, ${covers.to}): wider than --from/--to asked, for a partition is the unit of work (a smaller partition size cuts closer)`,
      ]
    : [];
}

const timeZoneOf = (p: PlannedPartition): string | undefined => (p.bounds.kind === 'time' ? p.bounds.timeZone : undefined);

interface Order<T> {
  parse(text: string, flag?: string, problems?: string[]): T;
  compare(a: T, b: T): number;
}

const integerOrder: Order<bigint> = {
  parse(text, flag, problems) {
    if (/^-?\d+$/.test(text.trim())) return BigInt(text.trim());
    problems?.push(`${flag} ${text}: not a whole number, and this plan's partitions are ranges of whole numbers`);
    return 0n;
  },
  compare: (a, b) => (a < b ? -1 : a > b ? 1 : 0),
};

/** A date or timestamp; without an offset, in the plan's time zone (UTC when it has none), as the plan's bounds were cut. */
function timeOrder(timeZone: string | undefined): Order<number> {
  return {
    parse(text, flag, problems) {
      const at = DateTime.fromISO(text.trim(), { zone: timeZone ?? 'UTC', setZone: true });
      if (at.isValid) return at.toMillis();
      problems?.push(`${flag} ${text}: not a date or timestamp (e.g. 2024-03-01 or 2024-03-01T12:00:00Z)`);
      return 0;
    },
    compare: (a, b) => a - b,
  };
}
