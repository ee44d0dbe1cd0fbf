/**
 * The end of a run: the whole-run check (when nothing failed or was cancelled), the ledger's
 * final status, the after-actions of a run that succeeded, and the cleanup of its temporary state.
 */
import { CancelledFailure } from '@temporalio/workflow';
import { judged } from './proxies';
import type { RunExecution } from './execution';
import type { RunResult } from './types';

export async function finishRun(x: RunExecution): Promise<RunResult> {
  const { database, runId, spec, gated } = x;
  x.finishing = true;
  if (gated && !x.s.cancelRequested && x.s.counts.failed === 0 && x.s.counts.cancelled === 0) {
    // finalizeRun reads the check's verdict from the ledger
    x.s = { ...x.s, finalCheck: await judged('the final check', () => x.checks.checkFinal({ database, runId })) };
    x.publishNow();
  }
  // a final check that could not complete fails the run: finalizeRun records why
  const checkError = x.s.finalCheck?.incomplete ? x.s.finalCheck.failures[0] : undefined;
  const final = await x.acts.finalizeRun({ database, runId, ...(checkError ? { checkError } : {}) });
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
  if (gated && final.status === 'succeeded' && downstream !== 'failed') await x.checks.cleanupRun({ database, runId }).catch(() => undefined);
  const result: RunResult = {
    runId,
    status: final.status,
    partitions: { total: final.total, succeeded: final.byStatus.succeeded, failed: final.byStatus.failed, cancelled: final.byStatus.cancelled },
    rowsRead: final.rowsRead,
    rowsWritten: final.rowsWritten,
    rowsUnchanged: final.rowsUnchanged,
    ...(downstream ? { downstream } : {}),
  };
  if (x.s.cancelledByTemporal)
    throw new CancelledFailure(`backfill ${spec.name}/${runId} cancelled; ${result.rowsWritten} rows were written before it stopped`);
  return result;
}
