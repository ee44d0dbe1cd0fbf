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
 */
import { withTransaction } from '../db/pool';
import { recordEvent } from '../ledger/events';
import { cancelPending, finishPartition, nextUnfinished, runTotals, type RunTotals } from '../ledger/partitions';
import { getRun, transitionRun, writeRunControl } from '../ledger/runs';
import type { RunStatus } from '../shared/statuses';
import type { Limits, OperatorAction, PartitionReport } from '../shared/types';
import type { ActivityDeps } from './deps';
import { reportOf } from './process-partition';

export interface ControlEvent extends OperatorAction {
  key: string;
  kind: 'paused' | 'resumed' | 'cancel-requested' | 'limits-changed';
  detail?: Record<string, unknown>;
}

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

    async nextPartitions(input: { database: string; runId: string; fromOrdinal: number; limit: number }): Promise<{ id: string; ordinal: number }[]> {
      return nextUnfinished(deps.pools.get(input.database), input.runId, input.fromOrdinal, input.limit);
    },

    async recordPartitionFailure(input: { database: string; runId: string; partitionId: string; message: string }): Promise<PartitionReport> {
      const row = await finishPartition(deps.pools.get(input.database), input.runId, input.partitionId, 'failed', { message: input.message });
      return reportOf(row);
    },

    async finalizeRun(input: { database: string; runId: string }): Promise<FinalizeRunResult> {
      const pool = deps.pools.get(input.database);
      return withTransaction(pool, async (client) => {
        const run = await getRun(client, input.runId);
        if (!run) throw new Error(`run ${input.runId} is not in the ledger`);
        if (run.cancel_requested) await cancelPending(client, input.runId);
        const totals = await runTotals(client, input.runId);
        const failed = totals.byStatus.failed > 0;
        const outcome: RunStatus = run.cancel_requested ? 'cancelled' : failed || totals.byStatus.succeeded < totals.total ? 'failed' : 'succeeded';
        const lastError = failed ? `${totals.byStatus.failed} of ${totals.total} partitions failed; see backfill status ${input.runId}` : undefined;
        const status = await transitionRun(client, input.runId, outcome, lastError);
        await recordEvent(client, {
          runId: input.runId,
          key: 'finished',
          kind: 'finished',
          actor: 'backfill',
          detail: { status, ...totals },
        });
        return { status, ...totals };
      });
    },
  };
}
