/** Following a run to its end from the command line (start --wait, watch, retry-failed --wait). */
import { runWorkerGap } from '../operations/database-workers';
import { statusReportFor } from '../operations/status';
import type { RunStatus } from '../domain/statuses';
import { temporalConfig } from '../temporal/config';
import { connectClient } from '../temporal/connect';
import { emit, format, type OutputOptions } from './output';
import { streamProgress } from './render/progress-lines';
import { renderStatus } from './render/status';
import { watchRun } from './render/watch';
import { runLink } from './web-ui-links';
import type { LedgerSession } from './with-backfill';

/**
 * Follows the run to its end, prints its status report; exit 1 unless it succeeded. With
 * `-o jsonl` the updates stream on stdout as JSON lines, and the report is the last line
 * (`"type": "status"`).
 */
export async function followToEnd(session: LedgerSession, runId: string, opts: OutputOptions): Promise<void> {
  const lines = format(opts) === 'jsonl';
  const temporal = lines ? undefined : await connectClient(temporalConfig(), { connectTimeout: '2s' }).catch(() => undefined);
  let status: RunStatus;
  try {
    // said while no worker serves the run's database: the ledger alone would show a run standing still
    const workflowId = temporal && (await session.findRun(runId)).workflow_id;
    status = lines
      ? await streamProgress(session.pool, runId)
      : await watchRun(session.pool, runId, temporal && workflowId ? { workerGap: () => runWorkerGap(temporal.client.workflow, workflowId) } : {});
  } finally {
    await temporal?.close();
  }
  const found = await statusReportFor(session.pool, runId);
  const report = { ...found, webUi: runLink(found.workflowId) };
  emit(opts, lines ? { type: 'status', ...report } : report, renderStatus);
  if (status !== 'succeeded') process.exitCode = 1;
}
