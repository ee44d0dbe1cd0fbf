/**
 * The end of a run: the whole-run check (when nothing failed or was cancelled), the ledger's
 * final status, the after-actions of a run that succeeded, and the cleanup of its temporary state.
 * A run that ended failed fails its workflow execution, its result carried in the failure's
 * details, so the Web UI and `temporal workflow list` show it Failed (operations/run-workflow.ts
 * waitForResult reads the result back); executions recorded before 'run-failure-fails-execution'
 * completed with it. A run cancelled through Temporal (`backfill cancel`, the Web UI's cancel)
 * ends its execution Canceled, its result in the memo.
 */
import { ApplicationFailure, CancellationScope, CancelledFailure, condition, patched, upsertMemo } from '@temporalio/workflow';
import { FailureType } from '../../domain/failures';
import { MAX_CHECK_CONCURRENCY } from '../../domain/limits';
import { finishActivities, judged } from './proxies';
import type { RunExecution } from './execution';
import { restoresImages, type RunResult } from './input';
import type { GateVerdictLike } from '../run-state';

export async function finishRun(x: RunExecution): Promise<RunResult> {
  const { database, runId, spec, gated } = x;
  x.finishing = true;
  // a revert verified every row it restored, in the chunk that restored it
  if (gated && !restoresImages(x.input) && !x.s.cancelRequested && x.s.counts.failed === 0 && x.s.counts.cancelled === 0) {
    // finalizeRun reads the check's verdict from the ledger
    x.s = { ...x.s, finalCheck: await judged('the final check', () => checkWholeRun(x)) };
    x.publishNow();
  }
  // a final check that could not complete fails the run: finalizeRun records why
  const checkError = x.s.finalCheck?.incomplete ? x.s.finalCheck.failures[0] : undefined;
  // without after-actions nothing stands between the verdict and the cleanup: finalizeRun does both
  const cleanUp = gated && (spec.after?.length ?? 0) === 0 && patched('cleanup-in-finalize');
  const final = await finishActivities(x.input.databaseQueue).finalizeRun({
    database,
    runId,
    ...(checkError ? { checkError } : {}),
    ...(cleanUp ? { cleanUp } : {}),
  });
  x.s = { ...x.s, status: final.status };
  x.publishNow();
  let downstream: RunResult['downstream'];
  if (gated && final.status === 'succeeded' && (spec.after?.length ?? 0) > 0) {
    try {
      downstream = (await x.checks.runAfterActions({ database, runId })).downstream;
    } catch {
      // the data is right and the run stays succeeded; what failed is recorded for `backfill after`
      downstream = 'failed';
    }
  }
  // verified and downstream refreshed: temporary state may go (cleanupRun checks both again)
  if (gated && !cleanUp && final.status === 'succeeded' && downstream !== 'failed') await x.checks.cleanupRun({ database, runId }).catch(() => undefined);
  const result: RunResult = {
    runId,
    status: final.status,
    partitions: { total: final.total, succeeded: final.byStatus.succeeded, failed: final.byStatus.failed, cancelled: final.byStatus.cancelled },
    rowsRead: final.rowsRead,
    rowsWritten: final.rowsWritten,
    rowsUnchanged: final.rowsUnchanged,
    ...(downstream ? { downstream } : {}),
  };
  // `backfill cancel` follows its update with Temporal's cancellation; it may arrive after the run stopped
  if (x.s.awaitingTemporalCancel && !x.s.cancelledByTemporal) await condition(() => x.s.cancelledByTemporal, '1 minute');
  if (x.s.cancelledByTemporal) {
    // a Canceled execution carries no result: the memo keeps it, for waitForResult and the Web UI
    if (patched('cancelled-result-in-memo')) upsertMemo({ result });
    throw new CancelledFailure(`backfill ${spec.name}/${runId} cancelled; ${result.rowsWritten} rows were written before it stopped`);
  }
  if (result.status === 'failed' && patched('run-failure-fails-execution')) {
    throw ApplicationFailure.create({ message: failureSummary(x, result), type: FailureType.RunFailed, nonRetryable: true, details: [result] });
  }
  return result;
}

/**
 * The whole-run check, its partitions spread over one lane activity per concurrency slot (as
 * the run's partitions were), then checkFinal adding the run's own checks to their tallies. A
 * lane that fails stops the others: the check could not complete, and judged says why.
 * Executions recorded before 'final-check-lanes' compared every partition inside checkFinal.
 */
async function checkWholeRun(x: RunExecution): Promise<GateVerdictLike> {
  const { database, runId } = x;
  if (!patched('final-check-lanes')) return x.checks.checkFinal({ database, runId });
  const of = Math.max(1, Math.min(x.s.limits.concurrency, x.s.counts.succeeded, MAX_CHECK_CONCURRENCY));
  const scope = new CancellationScope();
  // the summary tells the lanes apart in the Web UI's event history and pending-activity view
  const lane = (i: number) =>
    x.checks.checkFinalLane.executeWithOptions({ summary: `final check, lane ${i + 1} of ${of}` }, [{ database, runId, lane: i, of }]);
  const lanes = scope.run(() => Promise.all(Array.from({ length: of }, (_, i) => lane(i))));
  try {
    return await x.checks.checkFinal({ database, runId, lanes: await lanes });
  } catch (err) {
    scope.cancel();
    throw err;
  }
}

/** One line for the Web UI's failure: what failed and where to look; the reasons are in the ledger. */
function failureSummary(x: RunExecution, result: RunResult): string {
  const { failed, total } = result.partitions;
  const why =
    failed > 0
      ? `${failed} of ${total} partitions failed`
      : x.s.finalCheck && !x.s.finalCheck.passed
        ? (x.s.finalCheck.failures[0] ?? 'the final check failed')
        : 'the run could not be shown complete';
  return `backfill ${x.spec.name}/${x.runId} failed: ${why}; see backfill status ${x.runId}, then backfill retry-failed ${x.runId} once the cause is fixed`;
}
