/**
 * Check a spec against its database and plan its partitions: the one path both `plan` /
 * `start` (before anything is written) and the registerRun activity (before the run is
 * recorded) take, so both refuse the same specs with the same problems. Problems are
 * returned, not thrown: each caller turns them into its own kind of error.
 */
import type pg from 'pg';
import { planPartitions, PlanError } from '../planner/partitions';
import type { PlannedPartition } from '../shared/types';
import type { SpecProblem } from '../specs/errors';
import type { FrozenTransform } from '../specs/load';
import type { Spec } from '../specs/schema';
import { inspectSpec } from './inspect';
import type { RunShape } from './shape';
import { readSourceFacts } from './source-facts';

export type CheckedPlan = { ok: true; shape: RunShape; partitions: PlannedPartition[] } | { ok: false; problems: SpecProblem[] };

export async function checkAndPlan(pool: pg.Pool, spec: Spec, transform: FrozenTransform): Promise<CheckedPlan> {
  const inspected = await inspectSpec(pool, spec, transform);
  if (!inspected.ok) return inspected;
  try {
    return { ok: true, shape: inspected.shape, partitions: planPartitions(spec.partition, await readSourceFacts(pool, spec)) };
  } catch (err) {
    if (err instanceof PlanError) return { ok: false, problems: [{ path: err.field, message: err.message }] };
    throw err;
  }
}
