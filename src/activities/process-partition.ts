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
 * do (src/governor), and does it: write, wait and say why, ask the run to pause, or stop.
 */
import { Context, sleep } from '@temporalio/activity';
import { CancelledFailure } from '@temporalio/common';
import {
  afterBudget,
  afterChunk,
  afterLockTimeout,
  afterStatementTimeout,
  decide,
  initialGovernorState,
  timeoutFloor,
  type Decision,
  type GovernorInput,
} from '../governor';
import { finishPartition, partitionReport, startAttempt } from '../ledger/partitions';
import { refundRows, reserveRows } from '../ledger/rate-limits';
import { readRunControl } from '../ledger/runs';
import { governing } from '../shared/guards';
import type { PartitionReport } from '../shared/types';
import { partitionFinishedSignal } from '../workflows/messages';
import { readGuards } from '../checks/guard-signals';
import { runChunk } from './chunk';
import { INPUT_CHANGE_ACTOR, inputChangeHold } from './input-check';
import { chunkMetrics } from './chunk-metrics';
import type { ActivityDeps } from './deps';
import type { Logger } from 'pino';
import { PartitionReporting } from './partition-reporting';
import type { RunContextCache } from './run-context';

export interface ProcessPartitionInput {
  database: string;
  runId: string;
  partitionId: string;
}

export function processPartitionActivity(deps: ActivityDeps, contexts: RunContextCache) {
  const pollMs = deps.pausePollMs ?? 1000;

  return async function processPartition(input: ProcessPartitionInput): Promise<PartitionReport> {
    const { runId, partitionId } = input;
    const pool = deps.pools.get(input.database);
    const ctx = await contexts.get(pool, runId);
    const log = deps.logger.child({ runId, partitionId });
    const activity = Context.current();
    const metrics = chunkMetrics(activity, ctx.run);

    let row = await startAttempt(pool, runId, partitionId);
    const reporting = new PartitionReporting(pool, activity, { runId, partitionId, runWorkflowId: ctx.run.workflow_id }, row, log);
    const wait = async (d: Extract<Decision, { kind: 'wait' }>) => {
      await reporting.enter(d.state, d.cause, d.reason);
      if (d.ms > 0) await sleep(d.ms);
    };
    try {
      log.info({ attempt: activity.info.attempt, cursor: row.cursor }, 'partition started');
      let governor = initialGovernorState();
      let inputsChecked = false;
      while (row.status === 'running') {
        if (activity.cancellationSignal.aborted) throw activity.cancellationSignal.reason ?? new CancelledFailure('activity cancelled');
        const control = await readRunControl(pool, runId);
        metrics.paused(control.paused);
        if (control.paused) inputsChecked = false;
        if (!inputsChecked && !control.paused && !control.cancelRequested) {
          // before the partition's first chunk and after every pause: what the transform reads must be what the run accepted
          const hold = await inputChangeHold(pool, ctx.run);
          if (hold) {
            log.warn({ reason: hold }, 'an input of the transform changed; asking the run to pause');
            await reporting.showHoldReason(hold);
            return { ...partitionReport(row), pauseRequest: { actor: INPUT_CHANGE_ACTOR, reason: hold, basedOnVersion: control.version } };
          }
          inputsChecked = true;
        }
        const facts: GovernorInput = { control, now: Date.now(), pollMs };
        let step = decide(governor, facts);
        if (step.decision.kind === 'measure') {
          const reading = governing(await readGuards(pool, control.limits.guards!, ctx.spec.target.table)) ?? null;
          step = decide(governor, { ...facts, reading });
        }
        governor = step.state;
        const decision = step.decision;
        if (decision.kind === 'stop') {
          row = await finishPartition(pool, runId, partitionId, 'cancelled');
          log.info('partition cancelled at a chunk boundary');
          break;
        }
        if (decision.kind === 'pause-run') {
          // long enough that an operator should look: the partition workflow asks the run to pause
          log.warn({ guard: decision.actor, reason: decision.reason }, 'guard hold timed out; asking the run to pause');
          await reporting.showHoldReason(decision.reason);
          return { ...partitionReport(row), pauseRequest: { actor: decision.actor, reason: decision.reason, basedOnVersion: control.version } };
        }
        if (decision.kind === 'measure') throw new Error('the governor asked for guard readings twice'); // unreachable: it was given one
        if (decision.kind === 'wait') {
          await wait(decision);
          continue;
        }

        if (decision.before) await wait(decision.before);
        let write = decision;
        const { rowsPerSecond } = control.limits;
        if (rowsPerSecond) {
          // one budget for the whole run, across workers: reserve this chunk's rows, wait out any debt
          const budgeted = afterBudget(write, await reserveRows(pool, runId, write.chunkSize, rowsPerSecond), decision.before?.reason ?? null);
          write = budgeted.write;
          if (budgeted.wait) await wait(budgeted.wait);
        }
        if (write.oneWriter) reporting.writingWhileSlowed();
        else await reporting.enter('writing', null, null);

        const started = Date.now();
        const failOnTimeout = write.chunkSize <= timeoutFloor(control.limits);
        const outcome = await runChunk(pool, ctx, {
          runId,
          partitionId,
          chunkSize: write.chunkSize,
          oneWriter: write.oneWriter,
          record: write.record,
          failOnTimeout,
          worker: deps.workerIdentity,
        });
        if (outcome.lockTimeout) {
          if (rowsPerSecond) await refundRows(pool, runId, write.chunkSize);
          await wait(afterLockTimeout(outcome.lockTimeout, pollMs));
          continue;
        }
        if (outcome.statementTimeout) {
          if (rowsPerSecond) await refundRows(pool, runId, write.chunkSize);
          governor = afterStatementTimeout(governor, { chunkSize: write.chunkSize, limits: control.limits });
          log.warn(
            { chunkSize: write.chunkSize, next: governor.timeoutCap, cause: outcome.statementTimeout },
            'chunk hit the statement timeout; trying smaller chunks',
          );
          continue;
        }
        if (outcome.pauseRun) {
          if (rowsPerSecond) await refundRows(pool, runId, write.chunkSize);
          log.error({ reason: outcome.pauseRun }, 'the database cannot write; asking the run to pause');
          await reporting.showHoldReason(outcome.pauseRun);
          return { ...partitionReport(outcome.row), pauseRequest: { actor: 'backfill', reason: outcome.pauseRun, basedOnVersion: control.version } };
        }
        if (outcome.concurrentChange) {
          // nothing was written: the chunk is computed again, from the state the application left
          if (rowsPerSecond) await refundRows(pool, runId, write.chunkSize);
          log.info({ cause: outcome.concurrentChange }, 'chunk met a concurrent change; computing it again');
          await sleep(Math.min(pollMs, 200));
          continue;
        }
        const ms = Date.now() - started - outcome.turnMs;
        if (rowsPerSecond) await refundRows(pool, runId, write.chunkSize - outcome.rowsRead);
        governor = afterChunk(governor, { chunkSize: write.chunkSize, ms, limits: control.limits });
        metrics.committed(outcome, ms);
        row = outcome.row;
        reporting.progressed(row);
      }
      log.info({ status: row.status, rowsWritten: row.rows_written, chunks: row.chunks }, 'partition finished');
      return await reportToRun(activity, ctx.run.workflow_id, partitionReport(row), log);
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
    await activity.client.workflow.getHandle(runWorkflowId).signal(partitionFinishedSignal, report);
    return { ...report, reported: true };
  } catch (err) {
    log.warn({ error: (err as Error).message }, 'could not report to the run; the partition workflow will');
    return report;
  }
}
