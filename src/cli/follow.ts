/** Following a run to its end from the command line (start --wait, watch, retry-failed --wait). */
import { statusReportFor } from '../operations/status';
import { emit, type OutputOptions } from './output';
import { renderStatus } from './render/status';
import { watchRun } from './render/watch';
import type { LedgerSession } from './session';

/** Follows the run to its end, prints its status report; exit 1 unless it succeeded. */
export async function followToEnd(session: LedgerSession, runId: string, opts: OutputOptions): Promise<void> {
  const status = await watchRun(session.pool, runId);
  emit(opts, await statusReportFor(session.pool, runId), renderStatus);
  if (status !== 'succeeded') process.exitCode = 1;
}
