/**
 * registerRun: migrates the ledger, checks the spec against the database, plans the
 * partitions and records the run, its partitions and its start in one transaction;
 * returns the first page of partitions to start.
 *
 * Idempotent: a retry finds the run already registered and returns it unchanged, so
 * the plan a run executes is the one recorded first. A second run of the same spec
 * name while one is active is refused by a unique index, naming the active run.
 */
import type { BackfillRunInput, RunApproval } from '../workflows/run/input';
import { ApplicationFailure } from '@temporalio/common';
import { withTransaction } from '../db/pool';
import { checkAndPlan } from '../preflight/check-and-plan';
import { excessPrivilege } from '../preflight/role-posture';
import { recordEvent } from '../ledger/events';
import { recordFleetMembership } from '../ledger/fleets';
import { migrateLedger } from '../ledger/migrate';
import { insertPartitions } from '../ledger/partitions';
import { findActiveRun, findActiveRunOnTarget, getRun, holderFacts, insertRun, resolveRelation, transitionRun, type RunRow } from '../ledger/runs';
import { checkModulePath } from '../security/module-origin';
import { storeArtifact } from '../ledger/artifacts';
import { bundleTransform, TransformBundleError, type TransformArtifact } from '../transforms/artifact';
import { refuseOtherDatabase } from './database-check';
import { FailureType } from '../domain/failures';
import { alreadyActiveMessage, runIdTakenMessage, targetBusyMessage, transformLabel } from '../domain/labels';
import { formatProblem } from '../specs/errors';
import type { FrozenTransform } from '../specs/load';
import { specSchema, type Spec } from '../specs/schema';
import { resolveSpec, undoKeep } from '../specs/resolve';
import { createImageTables, imageTableOf, imageTablesOf } from '../ledger/before-images';
import { compileBeforeImages } from '../undo/image-statements';
import type { RunOpening } from '../workflows/run-state';
import type { ActivityDeps } from './deps';
import type pg from 'pg';
import { stalePartitions } from '../ledger/stale';
import { partitionDifferences, summarizePartitions } from '../preflight/saved-plan';
import type { PlannedPartition } from '../domain/types';
import { inputChanges, type InputFingerprint } from '../preflight/input-fingerprints';
import { runInputs, serverVersion } from '../preflight/run-inputs';
import { scopeRows } from '../preflight/scope-rows';
import { engineVersion } from '../util/engine-version';
import { chosenSubset, isSubsetRequest, selectSubset, type RunSubset, type SubsetRequest } from '../compiler/subset';
import { firstOpening } from './first-opening';

export type { RunApproval };

/** A backfill run's input as its workflow hands it on, with the workflow's id and the size of a plan page. */
export type RegisterRunInput = Pick<
  BackfillRunInput,
  'runId' | 'spec' | 'specFile' | 'specHash' | 'transform' | 'startedBy' | 'databaseIdentity' | 'approval' | 'onlyStale' | 'subset' | 'fleet'
> & {
  workflowId: string;
  pageSize: number;
};

export function registerRunActivity(deps: ActivityDeps) {
  return async function registerRun(input: RegisterRunInput): Promise<RunOpening> {
    const partitionsTotal = await register(input);
    const pool = deps.pools.get(input.spec.database);
    return firstOpening(pool, input.runId, partitionsTotal, input.pageSize, deps.notifyDefault);
  };

  async function register(input: RegisterRunInput): Promise<number> {
    const { runId } = input;
    // the spec came through Temporal, from whoever could start a workflow: check it as the CLI does
    const reparsed = specSchema.safeParse(input.spec);
    if (!reparsed.success) {
      const problems = reparsed.error.issues.map((i) => `${i.path.join('.') || 'spec'} ${i.message}`);
      throw ApplicationFailure.nonRetryable(`run ${runId} was started with a spec that is not valid: ${problems.join('; ')}`, FailureType.SpecInvalid);
    }
    // as written, for the record; resolved, for everything the run is checked and planned by
    const spec = reparsed.data;
    const resolved = resolveSpec(spec);
    let transform = input.transform;
    let artifact: TransformArtifact | undefined;
    if (transform.kind === 'module') {
      // the path came through Temporal: load nothing from outside this worker's transform directories
      const allowed = checkModulePath(deps.trust, transform.modulePath!);
      if (!allowed.ok) throw ApplicationFailure.nonRetryable(allowed.message, FailureType.SpecInvalid);
      transform = { ...transform, modulePath: allowed.path };
      artifact = bundleOnWorker(runId, transform);
    }
    const pool = deps.pools.get(spec.database);
    // before anything is written: this worker's variable may point at another database than the run's
    await refuseOtherDatabase(pool, input.databaseIdentity, runId, spec.database);
    await migrateLedger(pool);

    const existing = await getRun(pool, runId);
    if (existing) {
      // a retry of this registration finds its own run; anything else holding the id is another run
      if (existing.spec_hash !== input.specHash) {
        throw ApplicationFailure.nonRetryable(
          runIdTakenMessage(runId, holderFacts(existing), { name: spec.name, specHash: input.specHash }),
          FailureType.SpecInvalid,
        );
      }
      return existing.partitions_total;
    }
    const active = await findActiveRun(pool, spec.name);
    if (active) throw runAlreadyActive(spec.name, active.run_id, active.status);

    const checked = await checkAndPlan(pool, resolved, transform);
    if (!checked.ok) {
      const file = input.specFile ?? `spec ${spec.name}`;
      throw ApplicationFailure.nonRetryable(checked.problems.map((p) => formatProblem(file, p)).join('\n'), FailureType.SpecInvalid);
    }
    const { shape } = checked;
    const excess = excessPrivilege(checked.role);
    if (excess) deps.logger.warn({ runId, database: spec.database }, `worker ${excess}`);
    const inputFingerprints = await runInputs(pool, resolved, shape);
    if (input.approval) refuseUnapproved(runId, input.approval, checked.partitions, inputFingerprints);
    // part of the plan on purpose: recorded as the run's subset, which its proof of completeness covers exactly
    const chosen = input.onlyStale
      ? await onlyStale(pool, runId, resolved, checked.partitions)
      : isSubsetRequest(input.subset)
        ? subsetOf(runId, checked.partitions, input.subset)
        : undefined;
    const partitions = chosen?.partitions ?? checked.partitions;
    const scope = await scopeRows(pool, resolved);
    // a run of some partitions reads about their share of the scope
    const rowsPlanned =
      partitions.length === checked.partitions.length
        ? scope
        : { rows: Math.round((scope.rows * partitions.length) / checked.partitions.length), exact: false };
    const targetRelation = (await resolveRelation(pool, spec.target.table))!;
    const busy = await findActiveRunOnTarget(pool, targetRelation);
    if (busy) throw targetBusy(targetRelation, busy);

    const keep = undoKeep(resolved);
    const imageTable = imageTableOf(runId);
    try {
      await withTransaction(pool, async (client) => {
        const inserted = await insertRun(client, {
          runId,
          name: spec.name,
          workflowId: input.workflowId,
          reason: spec.reason,
          spec,
          specFile: input.specFile,
          specHash: input.specHash,
          transform,
          databaseVar: spec.database,
          limits: spec.limits,
          shape,
          partitionsTotal: partitions.length,
          startedBy: input.startedBy,
          targetRelation,
          databaseIdentity: input.databaseIdentity,
          inputFingerprints: transform.kind === 'sql' ? inputFingerprints : undefined,
          serverVersion: await serverVersion(client),
          engineVersion: engineVersion(),
          approvedPlan: input.approval?.plan,
          approvedBy: input.approval?.approvedBy,
          onlyStale: input.onlyStale,
          ...(chosen ? { subset: chosen.subset } : {}),
          rowsPlanned,
          ...(keep !== null ? { undo: { table: imageTable, keep } } : {}),
        });
        if (!inserted) return;
        if (input.fleet) await recordFleetMembership(client, runId, input.fleet);
        // in the run's own transaction: a registered run that keeps images always has their table
        if (keep !== null) await createImageTables(client, compileBeforeImages(resolved, shape).createTables(imageTablesOf(runId)));
        if (artifact) await storeArtifact(client, artifact, transform.modulePath!);
        const planned = await insertPartitions(client, runId, partitions);
        if (planned !== partitions.length) {
          // two partitions with one id: one would never run while the run reported success
          throw ApplicationFailure.nonRetryable(
            `the plan of run ${runId} has ${partitions.length} partitions but only ${planned} distinct ids; nothing was recorded. This is a bug in backfill: report it with the spec`,
            FailureType.SpecInvalid,
          );
        }
        await transitionRun(client, runId, 'running');
        await recordEvent(client, {
          runId,
          key: 'registered',
          kind: 'registered',
          actor: input.startedBy,
          reason: spec.reason,
          detail: {
            partitions: partitions.length,
            rowsPlanned: rowsPlanned.rows,
            rowsPlannedExact: rowsPlanned.exact,
            specHash: input.specHash,
            // which role's powers the chunks run with, for the audit record
            role: checked.role,
            transform: transformLabel({ name: input.transform.name, version: input.transform.version }),
            codeHash: input.transform.codeHash,
            ...(artifact ? { bundled: artifact.inputs, builtins: artifact.builtins, bundler: artifact.bundler } : {}),
            ...(inputFingerprints.length > 0 ? { inputs: inputFingerprints.map((f) => f.name) } : {}),
            // kept for the audit record: whether this run can be undone, and for how long
            undo: keep ?? 'off',
            ...(chosen ? { subset: { partitions: chosen.subset.partitions.length, ofPlanned: chosen.subset.ofPlanned, asked: chosen.subset.asked } } : {}),
            ...(input.approval ? { approvedBy: input.approval.approvedBy, plan: input.approval.plan.partitions.digest } : {}),
            ...(input.fleet
              ? { fleet: input.fleet.record.fleetId, member: input.fleet.member, wave: input.fleet.wave, waveApprovedBy: input.fleet.waveApprovedBy }
              : {}),
          },
        });
        await recordEvent(client, { runId, key: 'started', kind: 'started', actor: input.startedBy, reason: spec.reason });
      });
    } catch (err) {
      // the unique index on active names: another start won the race between our check and insert
      if ((err as { constraint?: string }).constraint === 'runs_one_active_per_name') {
        const winner = await findActiveRun(pool, spec.name);
        throw runAlreadyActive(spec.name, winner?.run_id ?? 'unknown', winner?.status ?? 'active');
      }
      if ((err as { constraint?: string }).constraint === 'runs_one_active_per_target') {
        const winner = await findActiveRunOnTarget(pool, targetRelation);
        throw targetBusy(targetRelation, winner ?? ({ run_id: 'unknown', name: 'unknown', status: 'running' } as RunRow));
      }
      throw err;
    }
    deps.logger.info({ runId, partitions: partitions.length }, 'run registered');
    return partitions.length;
  }
}

/** The stale partitions of the plan, renumbered in plan order (ramp stages count ordinals). */
async function onlyStale(
  pool: pg.Pool,
  runId: string,
  spec: Spec,
  planned: PlannedPartition[],
): Promise<{ partitions: PlannedPartition[]; subset: RunSubset }> {
  const stale = new Set((await stalePartitions(pool, spec.name, spec.transform.version)).map((p) => p.partitionId));
  const chosen = chosenSubset(planned, (p) => stale.has(p.id), { onlyStale: true });
  if (chosen.partitions.length === 0) {
    throw ApplicationFailure.nonRetryable(
      `run ${runId}: no partition of ${spec.name} is stale (backfill stale shows why); nothing to re-run`,
      FailureType.SpecInvalid,
    );
  }
  return chosen;
}

/** `start --partition`, `--from/--to`: checked by the starter too; here against the plan this worker made. */
function subsetOf(runId: string, planned: PlannedPartition[], request: SubsetRequest): { partitions: PlannedPartition[]; subset: RunSubset } {
  const selected = selectSubset(planned, request);
  if (!selected.ok) throw ApplicationFailure.nonRetryable(`run ${runId}: ${selected.problems.join('; ')}`, FailureType.SpecInvalid);
  return selected;
}

/**
 * A run started from a saved plan registers only if what this worker planned is that plan:
 * the same partitions, and inputs unchanged since it was approved (the starter compared the
 * rest: spec and code hashes are in the input and checked above).
 */
function refuseUnapproved(runId: string, approval: RunApproval, partitions: PlannedPartition[], inputs: InputFingerprint[]): void {
  const differences = [
    ...partitionDifferences(approval.plan.partitions, summarizePartitions(partitions)),
    ...inputChanges(approval.plan.inputs, inputs, 'in the approved plan').map((c) => `input ${c}`),
  ];
  if (differences.length === 0) return;
  throw ApplicationFailure.nonRetryable(
    `run ${runId} is not the plan ${approval.approvedBy} approved: ${differences.join('; ')}. Make and approve a new plan (backfill plan --save)`,
    FailureType.SpecInvalid,
  );
}

/**
 * The bundle this worker makes of the module must be the one the run was started with (its
 * hash is in the spec hash): the same module and helpers, byte for byte. The worker's bundle,
 * not anything that came through Temporal, is what the ledger keeps.
 */
function bundleOnWorker(runId: string, transform: FrozenTransform): TransformArtifact {
  let artifact: TransformArtifact;
  try {
    artifact = bundleTransform(transform.modulePath!);
  } catch (err) {
    if (!(err instanceof TransformBundleError)) throw err;
    throw ApplicationFailure.nonRetryable(
      `run ${runId}: transform module ${transform.modulePath} cannot be bundled on this worker: ${err.message}`,
      FailureType.SpecInvalid,
    );
  }
  if (artifact.codeHash !== transform.codeHash) {
    throw ApplicationFailure.nonRetryable(
      `run ${runId}: transform module ${transform.modulePath} bundles to code ${artifact.codeHash.slice(0, 12)} on this worker, ` +
        `but the run was started with code ${transform.codeHash.slice(0, 12)}; the module or a file it imports differs here (${artifact.inputs.join(', ')}). ` +
        'Deploy the same sources to the workers, then start again',
      FailureType.TransformChanged,
    );
  }
  return artifact;
}

function targetBusy(target: string, run: Pick<RunRow, 'run_id' | 'name' | 'status'>): ApplicationFailure {
  return ApplicationFailure.nonRetryable(targetBusyMessage(target, { runId: run.run_id, name: run.name, status: run.status }), FailureType.RunAlreadyActive);
}

function runAlreadyActive(name: string, runId: string, status: string): ApplicationFailure {
  return ApplicationFailure.nonRetryable(alreadyActiveMessage(name, { runId, status }), FailureType.RunAlreadyActive);
}
