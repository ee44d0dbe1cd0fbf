/**
 * Activities the run workflow uses to keep the ledger in step with its decisions.
 *
 * - syncRunControl writes pause / cancel / limits (guarded by a growing version, so a
 *   late retry cannot undo a newer decision) and the operator events that caused them
 *   (keyed, so a retry records each event once).
 * - nextPartitions pages through the plan in order; it returns ids only.
 * - recordPartitionFailure marks a partition failed when its activity gave up (a
 *   no-op if the activity already recorded the failure with its key range).
 * - finalizeRun computes the run's outcome from the ledger and records it.
 * - reconcilePartitions finds partition workflows that closed without reporting (terminated
 *   or timed out by hand or by policy) and records them failed, so the run does not wait
 *   forever; retry-failed re-runs them from their cursors.
 */
import { resolveSpec } from '../specs/resolve';
import { Context } from '@temporalio/activity';
import { WorkflowNotFoundError } from '@temporalio/common';
import { withTransaction } from '../db/pool';
import { partitionWorkflowId } from '../domain/ids';
import { completenessProblems } from '../ledger/completeness';
import { completenessRows, plannedBounds } from '../ledger/partition-reads';
import { recordEvent } from '../ledger/events';
import { failedGates } from '../ledger/gates';
import {
  cancelPending,
  finishPartition,
  getPartition,
  nextUnfinished,
  partitionReport,
  runTotals,
  succeededRowCounts,
  type RunTotals,
} from '../ledger/partitions';
import { getRun, setRowsOutsidePlan, transitionRun } from '../ledger/runs';
import { CleanupRefused, cleanupRun } from '../after-actions/cleanup-run';
import { writeRunControl } from '../ledger/run-control';
import { startRetry } from '../ledger/run-attempts';
import { FINISHED_PARTITION_STATUSES, type RunStatus } from '../domain/statuses';
import type { ControlEvent, RunOpening } from '../workflows/run-state';
import type { Limits, PartitionReport } from '../domain/types';
import type pg from 'pg';
import { inReadOnlyCheck, querySingle } from '../db/session';
import { compileRun } from '../compiler/statements';
import type { ActivityDeps } from './deps';
import { withWorkerNotify } from '../notify/worker-default';
import { withCallDeadline } from './temporal-call-deadline';

export interface SyncRunControlInput {
  database: string;
  runId: string;
  version: number;
  paused: boolean;
  cancelRequested: boolean;
  limits: Limits;
  events: ControlEvent[];
}

export interface FinalizeRunResult extends RunTotals {
  status: RunStatus;
}

export function runControlActivities(deps: ActivityDeps) {
  return {
    async syncRunControl(input: SyncRunControlInput): Promise<RunStatus> {
      const pool = deps.pools.get(input.database);
      return withTransaction(pool, async (client) => {
        await writeRunControl(client, input.runId, input);
        for (const e of input.events) {
          await recordEvent(client, { runId: input.runId, key: e.key, kind: e.kind, actor: e.actor, reason: e.reason, detail: e.detail });
        }
        const to: RunStatus = input.cancelRequested ? 'cancelling' : input.paused ? 'paused' : 'running';
        return transitionRun(client, input.runId, to);
      });
    },

    /**
     * Starts a new attempt of a finished run (retry-failed): failed and cancelled partitions go
     * back to pending with their cursors; succeeded ones are not touched. Idempotent per attempt.
     */
    async startRunAttempt(input: { database: string; runId: string; attempt: number; actor: string; reason?: string; pageSize: number }): Promise<RunOpening> {
      const pool = deps.pools.get(input.database);
      const retry = await withTransaction(pool, async (client) => {
        const started = await startRetry(client, input.runId, input.attempt);
        // keyed per attempt: a retried activity keeps the first record (with the real count)
        await recordEvent(client, {
          runId: input.runId,
          key: `retry-${input.attempt}`,
          kind: 'retry',
          actor: input.actor,
          reason: input.reason,
          detail: { attempt: input.attempt, partitions: started.partitionsRequeued },
        });
        return started;
      });
      const totals = await runTotals(pool, input.runId);
      return {
        partitionsTotal: totals.total,
        firstPage: await nextUnfinished(pool, input.runId, 0, input.pageSize),
        succeeded: totals.byStatus.succeeded,
        // the workflow counts finished partitions' rows; the requeued ones report theirs when they finish
        finished: await succeededRowCounts(pool, input.runId),
        controlVersion: retry.controlVersion,
        ...withWorkerNotify(deps.notifyDefault),
      };
    },

    async nextPartitions(input: { database: string; runId: string; fromOrdinal: number; limit: number }): Promise<{ id: string; ordinal: number }[]> {
      return nextUnfinished(deps.pools.get(input.database), input.runId, input.fromOrdinal, input.limit);
    },

    /** `groups`: the group workflow that runs a partition, where one does (run-state.ts `groups`). */
    async reconcilePartitions(input: {
      database: string;
      runId: string;
      name: string;
      partitionIds: string[];
      groups?: Record<string, string>;
    }): Promise<PartitionReport[]> {
      const pool = deps.pools.get(input.database);
      const client = Context.current().client;
      const reports: PartitionReport[] = [];
      for (const partitionId of input.partitionIds) {
        const workflowId = input.groups?.[partitionId] ?? partitionWorkflowId(input.name, input.runId, partitionId);
        let status: string;
        try {
          status = (await withCallDeadline(client, () => client.workflow.getHandle(workflowId).describe())).status.name;
        } catch (err) {
          if (err instanceof WorkflowNotFoundError) continue; // not started yet, or long gone: nothing to conclude
          throw err;
        }
        if (status === 'RUNNING' || status === 'CONTINUED_AS_NEW') continue;
        // a partition workflow that completed or failed reported before it closed; any other ending did not
        const silent = status !== 'COMPLETED' && status !== 'FAILED';
        const message = `partition workflow ${workflowId} ended ${status.toLowerCase()} without reporting (terminated by hand?); backfill retry-failed ${input.runId} re-runs it from its cursor`;
        const row = silent ? await finishPartition(pool, input.runId, partitionId, 'failed', { message }) : await getPartition(pool, input.runId, partitionId);
        if (silent)
          deps.logger.warn({ runId: input.runId, partitionId, workflowId, status }, 'partition workflow closed without reporting; recorded as failed');
        // only a finished partition may leave the run's in-flight set
        if (row && FINISHED_PARTITION_STATUSES.includes(row.status)) reports.push(partitionReport(row));
      }
      return reports;
    },

    async recordPartitionFailure(input: { database: string; runId: string; partitionId: string; message: string }): Promise<PartitionReport> {
      const row = await finishPartition(deps.pools.get(input.database), input.runId, input.partitionId, 'failed', { message: input.message });
      return partitionReport(row);
    },

    /**
     * `checkError`: the final check could not complete (the run fails, saying why). `cleanUp`: the
     * run has no after-actions, so a run that ends succeeded has its temporary state removed here,
     * as the cleanupRun activity would next (one hand-over fewer; executions since 'cleanup-in-finalize').
     */
    async finalizeRun(input: { database: string; runId: string; checkError?: string; cleanUp?: boolean }): Promise<FinalizeRunResult> {
      const pool = deps.pools.get(input.database);
      const outsidePlan = await rowsOutsidePlan(pool, input.runId, deps.logger);
      const result = await finish(pool, input, outsidePlan);
      if (input.cleanUp && result.status === 'succeeded') await cleanUpQuietly(pool, input.runId, deps.logger);
      return result;
    },
  };
}

/** How long the cleanup in finalizeRun waits for a lock before it leaves the state for later. */
const CLEANUP_LOCK_TIMEOUT = '5s';

async function finish(pool: pg.Pool, input: { runId: string; checkError?: string }, outsidePlan: number | null): Promise<FinalizeRunResult> {
  return withTransaction(pool, async (client) => {
    const run = await getRun(client, input.runId);
    if (!run) throw new Error(`run ${input.runId} is not in the ledger`);
    if (outsidePlan !== null) await setRowsOutsidePlan(client, input.runId, outsidePlan);
    if (run.cancel_requested) await cancelPending(client, input.runId);
    const totals = await runTotals(client, input.runId);
    const failed = totals.byStatus.failed > 0;
    // succeeded means every planned partition is in the ledger, the partitions tile the scope,
    // and each completed once: not just that every partition found there succeeded
    const ledger = await completenessRows(client, input.runId);
    const problems = completenessProblems(run.partitions_total, ledger, run.subset ?? undefined);
    // the whole-run check's verdict, as the ledger holds it: one row per gate in sum
    const gates = (await failedGates(client, input.runId, run.attempt, 'final')).filter((g) => g.partition_id === null);
    const outcome: RunStatus = run.cancel_requested
      ? 'cancelled'
      : failed || problems.length > 0 || gates.length > 0 || input.checkError || totals.byStatus.succeeded < totals.total
        ? 'failed'
        : 'succeeded';
    const lastError =
      problems.length > 0
        ? `the run cannot be shown complete: ${problems.slice(0, 3).join('; ')}${problems.length > 3 ? ` (and ${problems.length - 3} more)` : ''}; start a new run`
        : failed
          ? `${totals.byStatus.failed} of ${totals.total} partitions failed; see backfill status ${input.runId}`
          : input.checkError && !run.cancel_requested
            ? `${input.checkError}; the result is not verified: fix the cause, then check it with backfill verify ${input.runId}`
            : gates.length > 0 && !run.cancel_requested
              ? `the final check failed: ${gates.map((g) => `${g.gate} (${g.violations} ${g.gate.startsWith('distribution:') ? 'measure(s) beyond tolerance' : 'row(s)'})`).join(', ')}; the keys are in the ledger: backfill status ${input.runId}, backfill verify ${input.runId}`
              : undefined;
    const status = await transitionRun(client, input.runId, outcome, lastError);
    await recordEvent(client, {
      runId: input.runId,
      // one finish per attempt: a retried run finishes again
      key: `finished-${run.attempt}`,
      kind: 'finished',
      actor: 'backfill',
      // the completeness proof, kept with the audit record
      detail: {
        status,
        ...totals,
        rowsOutsidePlan: outsidePlan,
        // cutWhileRunning: the partitions limits.splitTail added, folded back into the planned ones by the proof
        proof: {
          planned: run.partitions_total,
          inLedger: ledger.length,
          cutWhileRunning: ledger.filter((p) => p.split_from).length,
          ...(run.subset ? { subsetOf: run.subset.ofPlanned } : {}),
          problems,
        },
        failedGates: gates.map((g) => ({ gate: g.gate, violations: Number(g.violations) })),
      },
    });
    return { status, ...totals };
  });
}

/**
 * As the cleanupRun activity after it: a refusal or a failure leaves the state for `backfill
 * cleanup`, and the run as it is. A lock held elsewhere (a session reading the image table) must
 * not keep the run from finishing, so its statements wait for no lock long.
 */
async function cleanUpQuietly(pool: pg.Pool, runId: string, logger: ActivityDeps['logger']): Promise<void> {
  const client = await pool.connect();
  try {
    await client.query(`SET lock_timeout = '${CLEANUP_LOCK_TIMEOUT}'`);
    await cleanupRun(client, runId, 'backfill');
  } catch (err) {
    // a refusal (a final gate failed) keeps the state on purpose
    if (!(err instanceof CleanupRefused))
      logger.warn({ runId, error: (err as Error).message }, 'the run succeeded; removing its temporary state failed (backfill cleanup removes it)');
  } finally {
    // a session whose setting could not be reset is not handed to the next user of the pool
    const broken = await client.query('RESET lock_timeout').then(
      () => false,
      () => true,
    );
    client.release(broken);
  }
}

/**
 * The scope was fixed at planning; rows that arrived since outside every planned partition
 * are counted, so the run says so instead of ending as if they were covered. Read-only and
 * time-limited; unknown (null) when it cannot finish in time.
 */
async function rowsOutsidePlan(pool: pg.Pool, runId: string, logger: ActivityDeps['logger']): Promise<number | null> {
  const run = await getRun(pool, runId);
  // a run of part of the plan (a subset, the stale partitions) covers part of the scope on purpose; a revert covers images, not a scope
  if (!run || run.only_stale || run.subset || run.reverts) return null;
  const statement = compileRun(resolveSpec(run.spec), run.shape).outsidePlan(await plannedBounds(pool, runId));
  try {
    return await inReadOnlyCheck(
      pool,
      async (client) => Number((await querySingle<{ n: string }>(client, statement.text, statement.values)).rows[0].n),
      SCOPE_CHECK_TIMEOUT_MS,
    );
  } catch (err) {
    logger.warn({ runId, error: (err as Error).message }, 'could not count rows outside the plan');
    return null;
  }
}

const SCOPE_CHECK_TIMEOUT_MS = 60_000;
