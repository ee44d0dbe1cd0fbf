/**
 * Starting a run: check and plan the spec, refuse a second active run of the same spec,
 * then start the run workflow and return once the run is in the ledger. Nothing is
 * written before every check has passed. Used by `backfill start`, the demo, the tests
 * and the benchmarks alike.
 */
import path from 'node:path';
import { type Client, type WorkflowHandle, type WorkflowHandleWithFirstExecutionRunId } from '@temporalio/client';
import type pg from 'pg';
import { findActiveRun, findActiveRunOnTarget, getRun, holderFacts, ledgerExists, resolveRelation } from '../ledger/runs';
import { FailureType } from '../domain/failures';
import { RUN_ID_PATTERN, runWorkflowId } from '../domain/ids';
import { alreadyActiveMessage, runIdTakenMessage, shortHash, targetBusyMessage, transformLabel } from '../domain/labels';
import type { PlannedPartition } from '../domain/types';
import type { LoadedSpec } from '../specs/load';
import { ensureSearchAttributes } from '../temporal/search-attributes';
import { pollUntil } from '../util/poll-until';
import type { RunWorkflowInput } from '../workflows/backfill-run';
import { defaultActor } from './actor';
import { newRunId } from './run-id';
import { withCheckedSpec } from './check-spec';
import { UsageError } from '../domain/usage-error';
import { runWorkerGap, workerGapLine } from './database-workers';
import { startRunWorkflow, workflowFailureCause } from './run-workflow';
import { readSavedPlan, refuseUnlessApproved } from './saved-plans';
import { stalePartitions } from '../ledger/stale';
import { isSubsetRequest, selectSubset, type SubsetRequest } from '../compiler/subset';

export interface StartRunOptions {
  specFile: string;
  runId?: string;
  actor?: string;
  /** Test knobs, passed through to the workflow. */
  maxHistoryEvents?: number;
  partitionHeartbeatTimeoutMs?: number;
  partitionLocalBudgetMs?: number;
  partitionsAlone?: boolean;
  reconcileIntervalMs?: number;
  notifyPollMs?: number;
  /** How long to wait for a worker to register the run (default 60 s). */
  registrationTimeoutMs?: number;
  /** `--plan`: start only if the spec still makes this saved plan; `approvedBy` is recorded with it. */
  approval?: { planFile: string; approvedBy: string };
  /** `--only-stale`: re-run only the partitions the ledger shows stale (backfill stale). */
  onlyStale?: boolean;
  /** `--partition`, `--from/--to`: run only these partitions of the plan (docs/operating.md "Run part of the plan"). */
  subset?: SubsetRequest;
}

export interface StartedRun {
  runId: string;
  workflowId: string;
  name: string;
  partitions: number;
  warnings: string[];
  handle: WorkflowHandleWithFirstExecutionRunId;
}

/** Temporal refuses payloads over 2 MB; the input travels again in activity inputs and continue-as-new. */
const MAX_START_PAYLOAD_BYTES = 1024 * 1024;

export async function startRun(temporal: { client: Client; taskQueue: string }, options: StartRunOptions): Promise<StartedRun> {
  const runId = options.runId ?? newRunId();
  if (!RUN_ID_PATTERN.test(runId)) throw new UsageError(`--run-id must match ${RUN_ID_PATTERN.source} (got "${runId}")`);
  const approvedPlan = options.approval && readSavedPlan(options.approval.planFile);
  if (options.approval && !options.approval.approvedBy.trim()) throw new UsageError('--approved-by must name who approved the plan');
  return withCheckedSpec(options.specFile, async (checked, pool) => {
    const { loaded } = checked;
    const warnings = [...checked.warnings];
    let { partitions } = checked;
    const { spec } = loaded;
    if (approvedPlan) refuseUnlessApproved(options.approval!.planFile, approvedPlan, checked);
    if (isSubsetRequest(options.subset)) {
      if (options.onlyStale) throw new UsageError('--only-stale chooses the partitions itself: give it, or --partition/--from/--to, not both');
      const selected = selectSubset(partitions, options.subset);
      if (!selected.ok) throw new UsageError(`${options.specFile}: ${selected.problems.join('\n')}`);
      partitions = selected.partitions;
      warnings.push(...selected.warnings);
    }
    if (options.onlyStale) {
      const stale = new Set((await stalePartitions(pool, spec.name, spec.transform.version)).map((p) => p.partitionId));
      partitions = partitions.filter((p) => stale.has(p.id));
      if (partitions.length === 0)
        throw new UsageError(`no partition of ${spec.name} is stale; nothing to re-run (backfill stale ${options.specFile} lists them)`);
    }
    if (await ledgerExists(pool)) {
      const holder = await getRun(pool, runId);
      if (holder) throw new UsageError(runIdTakenMessage(runId, holderFacts(holder)));
      const active = await findActiveRun(pool, spec.name);
      if (active)
        throw new UsageError(
          alreadyActiveMessage(spec.name, { runId: active.run_id, status: active.status, startedBy: active.started_by, createdAt: active.created_at }),
        );
      const target = await resolveRelation(pool, spec.target.table);
      const busy = target && (await findActiveRunOnTarget(pool, target));
      if (busy) throw new UsageError(targetBusyMessage(target, { runId: busy.run_id, name: busy.name, status: busy.status }));
    }
    await ensureSearchAttributes(temporal.client);
    const input: RunWorkflowInput = {
      kind: 'run',
      runId,
      spec,
      specFile: path.resolve(options.specFile),
      specHash: loaded.specHash,
      transform: loaded.transform,
      startedBy: options.actor ?? defaultActor(),
      databaseIdentity: checked.database.identity,
      maxHistoryEvents: options.maxHistoryEvents,
      partitionHeartbeatTimeoutMs: options.partitionHeartbeatTimeoutMs,
      ...(options.partitionLocalBudgetMs !== undefined ? { partitionLocalBudgetMs: options.partitionLocalBudgetMs } : {}),
      ...(options.partitionsAlone ? { partitionsAlone: true } : {}),
      reconcileIntervalMs: options.reconcileIntervalMs,
      ...(options.notifyPollMs ? { notifyPollMs: options.notifyPollMs } : {}),
      ...(approvedPlan ? { approval: { plan: approvedPlan, approvedBy: options.approval!.approvedBy } } : {}),
      ...(options.onlyStale ? { onlyStale: true } : {}),
      ...(isSubsetRequest(options.subset) ? { subset: options.subset } : {}),
    };
    const bytes = Buffer.byteLength(JSON.stringify(input));
    if (bytes > MAX_START_PAYLOAD_BYTES) {
      throw new UsageError(
        `${options.specFile}: the run's input would be ${(bytes / 1024 / 1024).toFixed(1)} MB, over the ${MAX_START_PAYLOAD_BYTES / 1024 / 1024} MB a Temporal payload may safely carry; ` +
          'omit partition.values to discover the values from the data, or shorten the spec',
      );
    }
    const handle = await startRunWorkflow(temporal.client, temporal.taskQueue, input, {
      status: 'pending',
      // name, reason, scope
      summary: `${spec.name}: ${spec.reason} — ${spec.source.table}${spec.source.where ? ` where ${spec.source.where}` : ''}, ${partitions.length}${partitions.length < checked.partitions.length ? ` of ${checked.partitions.length}` : ''} partitions`,
      details: runDetails(loaded, runId, partitions),
    });
    await waitForRegistration(pool, handle, runId, options.registrationTimeoutMs ?? 60_000);
    return { runId, workflowId: runWorkflowId(spec.name, runId), name: spec.name, partitions: partitions.length, warnings, handle };
  });
}

function runDetails({ resolved: spec, specHash, transform }: LoadedSpec, runId: string, partitions: PlannedPartition[]): string {
  return [
    `**${spec.name}** run \`${runId}\` — ${spec.reason}`,
    '',
    `- source \`${spec.source.table}\`${spec.source.where ? ` where \`${spec.source.where}\`` : ''}, key \`${spec.source.key.join(', ')}\``,
    `- ${partitions.length} partitions by ${spec.partition.by} on \`${spec.partition.column}\``,
    `- transform \`${transformLabel(transform)}\``,
    `- target \`${spec.target.table}\` (${spec.target.mode}, key ${spec.target.key.join(', ')})`,
    `- spec hash \`${shortHash(specHash)}\``,
    '',
    '```json',
    JSON.stringify(spec, null, 2).slice(0, 15_000),
    '```',
  ].join('\n');
}

/** Returns once the run is in the ledger; turns a refused registration (lost race, bad spec) into the operator's error. */
export async function waitForRegistration(pool: pg.Pool, handle: WorkflowHandle, runId: string, timeoutMs: number): Promise<void> {
  const outcome = await pollUntil(
    async () => {
      if ((await ledgerExists(pool)) && (await getRun(pool, runId))) return 'registered';
      const { status } = await handle.describe();
      return status.name === 'RUNNING' ? undefined : 'closed';
    },
    { timeoutMs, intervalMs: 50 },
  );
  if (outcome === 'registered') return;
  if (outcome === undefined) {
    // a worker that refuses the registration (another database behind its variable) says why in its last failure
    const pending = (await handle.describe().catch(() => undefined))?.raw.pendingActivities?.[0];
    const why = pending?.lastFailure?.message;
    const gap = why ? undefined : await runWorkerGap(handle.client, handle.workflowId).catch(() => undefined);
    throw new Error(
      why
        ? `run ${runId} did not register within ${timeoutMs / 1000}s; the workflow keeps retrying, and its last attempt said: ${why}`
        : gap
          ? `run ${runId} did not register within ${timeoutMs / 1000}s: ${workerGapLine(gap)}`
          : `run ${runId} did not register within ${timeoutMs / 1000}s; is a worker running on the task queue? (backfill worker)`,
    );
  }
  try {
    await handle.result();
  } catch (err) {
    const cause = workflowFailureCause(err);
    if (cause && (cause.type === FailureType.RunAlreadyActive || cause.type === FailureType.SpecInvalid)) throw new UsageError(cause.message);
    throw err;
  }
}
