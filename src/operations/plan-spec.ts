/**
 * `plan`: a spec checked against its database, its partitions, the inputs its transform reads,
 * and an estimate from sampled partitions (with `measureWrites`, sample chunks written and
 * rolled back). Writes nothing in the database but, with `measureGuards`, the commitMs guard's own
 * probe row in the ledger; with `save`, the plan goes to a file for review.
 */
import { createPool, databaseUrlFrom } from '../db/pool';
import type { InputFingerprint } from '../preflight/input-fingerprints';
import type { PartitionBounds } from '../domain/types';
import type { Spec } from '../specs/schema';
import { defaultActor } from './actor';
import { withCheckedLoaded, type CheckedSpec } from './check-spec';
import { loadSpecFile, type LoadedSpec } from '../specs/load';
import { estimatePlan, type PlanEstimate } from './estimate-plan';
import { savedPlanOf, writeSavedPlan } from './saved-plans';
import type { SavedPlan } from '../preflight/saved-plan';
import { isSubsetRequest, selectSubset, type RunSubset, type SubsetRequest } from '../compiler/subset';
import { UsageError } from '../domain/usage-error';
import { measureGuards, type GuardCalibration } from '../preflight/guard-calibration';

export interface PlanOptions {
  /** Write the sample chunks too, in a transaction that is rolled back, to measure write time and WAL. */
  measureWrites?: boolean;
  /**
   * Read the spec's guards (and commitMs, always) several times, as a worker does before each
   * chunk, and say where a threshold would slow or hold the run from its start. Commits the
   * commitMs probe row in the ledger, as the workers do.
   */
  measureGuards?: boolean;
  /** Save the plan to this file, for review and `start --plan`. */
  save?: string;
  /** Who planned it, recorded in a saved plan (default: the OS user). */
  actor?: string;
  /** Return the plan as `save` would write it (a fleet's plan keeps every member's). */
  keepSavedPlan?: boolean;
  /** `--partition`, `--from/--to`: plan and estimate only these partitions, as `start` with them would run. */
  subset?: SubsetRequest;
}

export interface SpecPlan {
  name: string;
  specHash: string;
  transform: ReturnType<typeof savedPlanOf>['transform'];
  target: Spec['target'];
  limits: Spec['limits'];
  database: CheckedSpec['database'];
  inputs: InputFingerprint[];
  partitions: { id: string; bounds: PartitionBounds }[];
  partitionsDigest: string;
  estimate: PlanEstimate;
  /** With `measureGuards`: what each guard reads now, against its thresholds. */
  guards?: GuardCalibration;
  warnings: string[];
  /** The file the plan was saved to. */
  saved?: string;
  /** The plan as saved (with keepSavedPlan). */
  savedPlan?: SavedPlan;
  /** With `subset`: the part of the plan it holds (`partitions` and the estimate are that part's). */
  subset?: RunSubset;
}

export async function planSpec(specFile: string, options: PlanOptions = {}): Promise<SpecPlan> {
  return planLoaded(loadSpecFile(specFile), options);
}

/** The same for a spec already loaded (a fleet's member). */
export async function planLoaded(loaded: LoadedSpec, options: PlanOptions = {}): Promise<SpecPlan> {
  const checking = performance.now();
  const whole = await withCheckedLoaded(loaded, async (c) => c);
  const checkSeconds = (performance.now() - checking) / 1000;
  const selected = isSubsetRequest(options.subset) ? selectSubset(whole.partitions, options.subset) : undefined;
  if (selected && !selected.ok) throw new UsageError(`spec ${loaded.spec.name}: ${selected.problems.join('\n')}`);
  if (selected && (options.save || options.keepSavedPlan))
    throw new UsageError(
      '--save keeps the whole plan for approval: save it without --partition/--from/--to, then start part of it with start --plan … --partition/--from/--to',
    );
  // the estimate and the listing are the subset's, as start with the same flags would run it
  const checked = selected ? { ...whole, partitions: selected.partitions, warnings: [...whole.warnings, ...selected.warnings] } : whole;
  const { partitions, warnings, inputs } = checked;
  const { spec } = loaded;
  // one connection more than the partitions it probes at once (estimate-plan.ts measures how many the database runs in parallel)
  const pool = createPool(databaseUrlFrom(spec.database), { max: Math.min(spec.limits.concurrency, 8) + 1, applicationName: 'backfill-cli' });
  let estimate: PlanEstimate;
  let guards: GuardCalibration | undefined;
  try {
    estimate = await estimatePlan(pool, checked, { measureWrites: options.measureWrites === true, checkSeconds });
    if (options.measureGuards)
      guards = await measureGuards(pool, spec.limits.guards, {
        targetTable: spec.target.table,
        databaseVar: spec.database,
        concurrency: spec.limits.concurrency,
      });
  } finally {
    await pool.end();
  }
  const saved = { ...savedPlanOf(checked, options.actor ?? defaultActor()), estimate };
  const window = spec.limits.window ? `${spec.limits.window.start}-${spec.limits.window.end}` : undefined;
  if (options.save) writeSavedPlan(options.save, saved);
  return {
    name: spec.name,
    specHash: loaded.specHash,
    transform: saved.transform,
    target: spec.target,
    limits: spec.limits,
    database: checked.database,
    inputs,
    partitions: partitions.map((p) => ({ id: p.id, bounds: p.bounds })),
    partitionsDigest: saved.partitions.digest,
    estimate,
    ...(guards ? { guards } : {}),
    warnings: [...warnings, ...durationWarnings(estimate, window), ...(guards?.guards.flatMap((g) => (g.advice ? [`guards: ${g.advice}`] : [])) ?? [])],
    ...(options.save ? { saved: options.save } : {}),
    ...(options.keepSavedPlan ? { savedPlan: saved } : {}),
    ...(selected ? { subset: selected.subset } : {}),
  };
}

/** A run projected to outlast a day, or its window, deserves a second look before it starts. */
function durationWarnings(e: PlanEstimate, window: string | undefined): string[] {
  const hours = e.projected.durationSeconds / 3600;
  if (hours <= 24) return [];
  const what = e.projected.lowerBound ? 'at least' : 'about';
  return [
    `duration: projected to take ${what} ${hours.toFixed(1)} h${window ? `, in the allowed hours ${window} of each day` : ''}: ` +
      'the run will meet deploys, failovers and changed inputs; split the scope into several runs, raise concurrency if the database has room, or accept it knowingly',
  ];
}
