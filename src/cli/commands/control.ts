import { temporalClient } from '../../client';
import { defaultActor } from '../start-run';
import { renderStatus, statusReport } from '../status';
import { watchRun } from '../watch';
import { retryFailed, sendControl, setLimits, waitForControl, type ControlAction } from '../control';
import { temporalConfig } from '../../config';
import { findRun, openLedgerPool } from '../ledger-access';
import { emit, UsageError, type OutputOptions } from '../output';
import type { AllowedWindow } from '../../shared/window';
import { describeLimits } from '../status';

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

export async function setLimitsCommand(
  ref: string,
  opts: OutputOptions & { database: string; actor?: string; reason?: string; concurrency?: string; chunkSize?: string; rowsPerSecond?: string; window?: string },
): Promise<void> {
  const number = (flag: string, value: string | undefined) => {
    if (value === undefined) return undefined;
    const n = Number(value);
    if (!Number.isFinite(n)) throw new UsageError(`${flag} must be a number (got "${value}")`);
    return n;
  };
  const change = {
    actor: opts.actor ?? defaultActor(),
    reason: opts.reason,
    concurrency: number('--concurrency', opts.concurrency),
    chunkSize: number('--chunk-size', opts.chunkSize),
    rowsPerSecond: opts.rowsPerSecond === 'off' ? null : number('--rows-per-second', opts.rowsPerSecond),
    window: opts.window === undefined ? undefined : parseWindowFlag(opts.window),
  };
  const pool = openLedgerPool(opts.database);
  const { client, close } = await temporalClient();
  try {
    const run = await findRun(pool, ref, opts.database);
    const limits = await setLimits(client, run, change);
    emit(opts, { runId: run.run_id, limits }, (r) => `Limits of ${run.name}/${r.runId}: ${describeLimits(r.limits)}.`);
  } finally {
    await close();
    await pool.end();
  }
}

export async function watchCommand(ref: string, opts: OutputOptions & { database: string }): Promise<void> {
  const pool = openLedgerPool(opts.database);
  try {
    const run = await findRun(pool, ref, opts.database);
    const status = await watchRun(pool, run.run_id);
    emit(opts, await statusReport(pool, (await findRun(pool, ref, opts.database))), renderStatus);
    if (status !== 'succeeded') process.exitCode = 1;
  } finally {
    await pool.end();
  }
}

export async function retryFailedCommand(ref: string, opts: OutputOptions & { database: string; actor?: string; reason?: string; wait?: boolean }): Promise<void> {
  const pool = openLedgerPool(opts.database);
  const { client, close } = await temporalClient();
  try {
    const run = await findRun(pool, ref, opts.database);
    const retry = await retryFailed(client, pool, run, { actor: opts.actor ?? defaultActor(), reason: opts.reason }, temporalConfig().taskQueue);
    if (!opts.wait) {
      emit(opts, { runId: run.run_id, attempt: retry.attempt, partitions: retry.partitions }, (r) =>
        `Retrying ${r.partitions} partitions of ${run.name}/${r.runId} (attempt ${r.attempt}); follow with: backfill watch ${r.runId}`,
      );
      return;
    }
    const status = await watchRun(pool, run.run_id);
    emit(opts, await statusReport(pool, await findRun(pool, ref, opts.database)), renderStatus);
    if (status !== 'succeeded') process.exitCode = 1;
  } finally {
    await close();
    await pool.end();
  }
}

/** `--window "22:00-06:00 Europe/Berlin"` (time zone optional, default UTC), or `off`. */
export function parseWindowFlag(value: string): AllowedWindow | null {
  if (value === 'off') return null;
  const m = /^\s*(\d\d:\d\d)\s*-\s*(\d\d:\d\d)(?:\s+(\S+))?\s*$/.exec(value);
  if (!m) throw new UsageError(`--window must look like "22:00-06:00 Europe/Berlin" (time zone optional, default UTC) or off (got "${value}")`);
  return { start: m[1], end: m[2], timeZone: m[3] ?? 'UTC' };
}
