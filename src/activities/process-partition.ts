/**
 * processPartition: moves one partition's keyset cursor through its rows, chunk by chunk.
 *
 * Idempotency contract: each chunk is one transaction that locks the partition's ledger
 * row, reads the cursor from it, writes only rows whose values differ, and advances the
 * cursor (see chunk.ts). A retry, a restarted worker or a zombie attempt therefore
 * continues from the last committed chunk and can neither apply nor count a chunk twice.
 * Calling it for a partition that already finished returns its recorded result and writes
 * nothing.
 *
 * Between chunks it reads the run's control row and the guards, asks the governor what to
 * do, and does it (partition-loop.ts).
 *
 * It runs first as the partition workflow's local activity, inside the workflow task that
 * started the partition: a partition of a chunk or a few, most of a run of small ones, finishes
 * there, with no activity task, no completion and no second workflow task in Temporal. The
 * local attempt cannot heartbeat, so it hands over in good order — its checkpoint committed,
 * the partition still running — once `localBudgetMs` has passed or before anything it would
 * wait for (a pause, a guard, the rows/s budget, the window); the partition's activity then
 * carries on from the checkpoint, with the heartbeat, the Web UI's progress and the retries it
 * always had (backfill-partition.ts).
 */
import { Context } from '@temporalio/activity';
import type { Logger } from 'pino';
import { partitionReport, startAttempt } from '../ledger/partitions';
import type { PartitionReport } from '../domain/types';
import { partitionFinishedSignal } from '../workflows/messages';
import type { ActivityDeps } from './deps';
import { PartitionLoop } from './partition-loop';
import { PartitionReporting } from './partition-reporting';
import type { RunContextCache } from './run-context';
import { withCallDeadline } from './temporal-call-deadline';

export interface ProcessPartitionInput {
  database: string;
  runId: string;
  partitionId: string;
  /** Run as a local attempt: hand over after this long, or before any wait. */
  localBudgetMs?: number;
  /** The activity taking over from a local attempt that handed over: the same attempt, carried on. */
  continues?: boolean;
  /** Its group's workflow reports it with the group's other finished members, in one signal (backfill-partition.ts). */
  deferReport?: boolean;
}

export function processPartitionActivity(deps: ActivityDeps, contexts: RunContextCache) {
  const pollMs = deps.pausePollMs ?? 1000;

  return async function processPartition(input: ProcessPartitionInput): Promise<PartitionReport> {
    const { runId, partitionId } = input;
    const pool = deps.pools.get(input.database);
    const ctx = await contexts.get(pool, runId);
    const log = deps.logger.child({ runId, partitionId });
    const activity = Context.current();
    const localBudgetMs = activity.info.isLocal ? input.localBudgetMs : undefined;
    // a retry of the activity after a handover is a new attempt: its first try was the handover's
    const row = await startAttempt(
      pool,
      runId,
      partitionId,
      input.continues === true && activity.info.attempt === 1,
      activity.info.workflowExecution?.workflowId,
    );
    const reporting = new PartitionReporting(pool, activity, { runId, partitionId, runWorkflowId: ctx.run.workflow_id }, row, log);
    try {
      log.info({ attempt: activity.info.attempt, cursor: row.cursor, local: localBudgetMs !== undefined }, 'partition started');
      const loop = new PartitionLoop(
        {
          pool,
          ctx,
          log,
          activity,
          reporting,
          pollMs,
          worker: deps.workerIdentity,
          runId,
          partitionId,
          localUntil: localBudgetMs === undefined ? undefined : Date.now() + localBudgetMs,
          continues: input.continues,
        },
        row,
      );
      const paused = await loop.run();
      if (paused) return paused;
      log.info({ status: loop.row.status, rowsWritten: loop.row.rows_written, chunks: loop.row.chunks }, 'partition finished');
      if (input.deferReport) return partitionReport(loop.row);
      return await reportToRun(activity, ctx.run.workflow_id, partitionReport(loop.row), log);
    } finally {
      await reporting.close();
    }
  };
}

/**
 * The partition's outcome goes to its run straight from here, as soon as it is in the ledger:
 * the run can start the next partition without waiting for this activity's completion to reach
 * the partition workflow and that workflow's own signal to follow (a workflow task and a server
 * round trip per partition). A retried attempt reports again; the run ignores a second report.
 * If the signal fails, the partition workflow sends it, as it always did.
 */
async function reportToRun(activity: Context, runWorkflowId: string, report: PartitionReport, log: Logger): Promise<PartitionReport> {
  try {
    // past its deadline the partition workflow reports instead, as a command of its own
    await withCallDeadline(activity.client, () => activity.client.workflow.getHandle(runWorkflowId).signal(partitionFinishedSignal, report));
    return { ...report, reported: true };
  } catch (err) {
    log.warn({ error: (err as Error).message }, 'could not report to the run; the partition workflow will');
    return report;
  }
}
