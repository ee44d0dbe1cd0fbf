/**
 * The spec resolved: what a validated spec means, derived once. `resolveSpec` is the only
 * place that turns a key given as one column into a list, parses a time partition's interval
 * or fills the undo default; the checks, the planner, the compiler and the activities take a
 * ResolvedSpec and never derive these again. Pure and workflow-safe.
 *
 * The spec as written (a `Spec`) stays what is hashed, recorded in the ledger and shown: a
 * resolved spec is always made from it again, never stored in its place.
 */
import { DEFAULT_UNDO_KEEP, parseInterval, type PartitionSpec, type Spec, type TimeUnit } from './schema';

export interface Interval {
  count: number;
  unit: TimeUnit;
}

type TimePartitionSpec = Extract<PartitionSpec, { by: 'time' }>;

/** A partition as planned: a time partition carries its parsed interval beside the text the spec gave. */
export type ResolvedPartition = Exclude<PartitionSpec, { by: 'time' }> | (TimePartitionSpec & { interval: Interval });

export type ResolvedSpec = Omit<Spec, 'source' | 'partition' | 'undo'> & {
  /** `key`: one column or a composite key's columns, always a list, in the order chunks walk them. */
  source: Omit<Spec['source'], 'key'> & { key: string[] };
  partition: ResolvedPartition;
  /** How long before-images are kept after the run (the default filled in), or 'off'. */
  undo: { keep: string } | 'off';
};

/** Already-resolved input comes back as it is, so a caller that may hold either can resolve safely. */
export function resolveSpec(spec: Spec | ResolvedSpec): ResolvedSpec {
  return {
    ...spec,
    source: { ...spec.source, key: typeof spec.source.key === 'string' ? [spec.source.key] : spec.source.key },
    partition: resolvePartition(spec.partition),
    undo: spec.undo === 'off' ? 'off' : { keep: spec.undo?.keep ?? DEFAULT_UNDO_KEEP },
  };
}

export function resolvePartition(partition: PartitionSpec | ResolvedPartition): ResolvedPartition {
  if (partition.by !== 'time') return partition;
  const interval = parseInterval(partition.size);
  // the schema refuses a size that does not parse: reaching here without one is a caller's bug
  if (!interval) throw new Error(`partition.size ${JSON.stringify(partition.size)} is not an interval; resolve only a validated spec`);
  return { ...partition, interval };
}

/** How long a run keeps its before-images, or null when it keeps none (`undo: off`). */
export function undoKeep(spec: ResolvedSpec): string | null {
  return spec.undo === 'off' ? null : spec.undo.keep;
}
