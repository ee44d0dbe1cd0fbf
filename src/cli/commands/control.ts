import { temporalClient } from '../../client';
import { defaultActor } from '../start-run';
import { sendControl, waitForControl, type ControlAction } from '../control';
import { findRun, openLedgerPool } from '../ledger-access';
import { emit, type OutputOptions } from '../output';

export async function controlCommand(
  action: ControlAction,
  ref: string,
  opts: OutputOptions & { database: string; actor?: string; reason?: string },
): Promise<void> {
  const pool = openLedgerPool(opts.database);
  const { client, close } = await temporalClient();
  try {
    const run = await findRun(pool, ref, opts.database);
    await sendControl(client, run, action, { actor: opts.actor ?? defaultActor(), reason: opts.reason });
    const applied = await waitForControl(pool, run.run_id, action);
    const past = { pause: 'paused', resume: 'resumed', cancel: 'cancelling' }[action];
    emit(opts, { runId: run.run_id, action, applied }, () =>
      applied
        ? `Run ${run.name}/${run.run_id} ${past}.`
        : `Signal sent to ${run.workflow_id}, but the ledger does not show it yet; is a worker running? Check: backfill status ${run.run_id}`,
    );
  } finally {
    await close();
    await pool.end();
  }
}
