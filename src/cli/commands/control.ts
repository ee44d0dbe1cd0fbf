/**
 * `backfill pause | resume | cancel | set-limits | retry-failed | watch`: parse the flags,
 * call the operation, render the outcome.
 */
import { defaultActor } from '../../operations/actor';
import { controlRun, setRunLimits, type ControlAction } from '../../operations/control';
import { retryFailed } from '../../operations/retry-failed';
import { statusReportFor } from '../../operations/status';
import { runLabel } from '../../shared/labels';
import { LIMIT_BOUNDS, limitsChangeProblem } from '../../shared/limits';
import type { LimitsChange } from '../../shared/types';
import type { AllowedWindow } from '../../shared/window';
import { temporalConfig } from '../../temporal/config';
import { emit, UsageError, type OutputOptions } from '../output';
import { describeLimits, renderStatus } from '../render/status';
import { watchRun } from '../render/watch';
import { withLedger, withLedgerAndTemporal, type LedgerSession } from '../session';

type ActorOptions = OutputOptions & { database: string; actor?: string; reason?: string };

export async function controlCommand(action: ControlAction, ref: string, opts: ActorOptions & { acceptInputChange?: boolean }): Promise<void> {
  await withLedgerAndTemporal(opts.database, async ({ client, pool, findRun }) => {
    const run = await findRun(ref);
    const who = { actor: opts.actor ?? defaultActor(), reason: opts.reason };
    const { applied } = await controlRun({ client, pool }, run, action, who, undefined, { acceptInputChange: opts.acceptInputChange });
    const past = { pause: 'paused', resume: 'resumed', cancel: 'cancelling' }[action];
    emit(opts, { runId: run.run_id, action, applied }, () =>
      applied
        ? `Run ${runLabel(run.name, run.run_id)} ${past}.`
        : `Signal sent to ${run.workflow_id}, but the ledger does not show it yet; is a worker running? Check: backfill status ${run.run_id}`,
    );
  });
}

export interface SetLimitsFlags extends ActorOptions {
  concurrency?: string;
  chunkSize?: string;
  rowsPerSecond?: string;
  window?: string;
}

function limitsChangeFromFlags(opts: SetLimitsFlags): LimitsChange {
  const number = (flag: string, value: string | undefined) => {
    if (value === undefined) return undefined;
    const n = Number(value);
    if (!Number.isFinite(n)) throw new UsageError(`${flag} must be a number (got "${value}")`);
    return n;
  };
  return {
    actor: opts.actor ?? defaultActor(),
    reason: opts.reason,
    concurrency: number('--concurrency', opts.concurrency),
    chunkSize: number('--chunk-size', opts.chunkSize),
    rowsPerSecond: opts.rowsPerSecond === 'off' ? null : number('--rows-per-second', opts.rowsPerSecond),
    window: opts.window === undefined ? undefined : parseWindowFlag(opts.window),
  };
}

export async function setLimitsCommand(ref: string, opts: SetLimitsFlags): Promise<void> {
  const change = limitsChangeFromFlags(opts);
  // the workflow's update validator says the same; checking here first answers without a round trip
  const problem = limitsChangeProblem(change);
  if (problem) throw new UsageError(problem);
  await withLedgerAndTemporal(opts.database, async ({ client, findRun }) => {
    const run = await findRun(ref);
    const limits = await setRunLimits({ client }, run, change);
    emit(opts, { runId: run.run_id, limits }, (r) => `Limits of ${runLabel(run.name, r.runId)}: ${describeLimits(r.limits)}.`);
  });
}

/** Follows the run to its end, prints its status report; exit 1 unless it succeeded. */
export async function followToEnd(session: LedgerSession, runId: string, opts: OutputOptions): Promise<void> {
  const status = await watchRun(session.pool, runId);
  emit(opts, await statusReportFor(session.pool, runId), renderStatus);
  if (status !== 'succeeded') process.exitCode = 1;
}

export async function watchCommand(ref: string, opts: OutputOptions & { database: string }): Promise<void> {
  await withLedger(opts.database, async (session) => followToEnd(session, (await session.findRun(ref)).run_id, opts));
}

export async function retryFailedCommand(ref: string, opts: ActorOptions & { wait?: boolean }): Promise<void> {
  await withLedgerAndTemporal(opts.database, async (session) => {
    const run = await session.findRun(ref);
    const who = { actor: opts.actor ?? defaultActor(), reason: opts.reason };
    const retry = await retryFailed({ client: session.client, pool: session.pool, taskQueue: temporalConfig().taskQueue }, run, who);
    if (opts.wait) return followToEnd(session, run.run_id, opts);
    emit(opts, { runId: run.run_id, attempt: retry.attempt, partitions: retry.partitions }, (r) =>
      `Retrying ${r.partitions} partitions of ${runLabel(run.name, r.runId)} (attempt ${r.attempt}); follow with: backfill watch ${r.runId}`,
    );
  });
}

/** `--window "22:00-06:00 Europe/Berlin"` (time zone optional, default UTC), or `off`. */
export function parseWindowFlag(value: string): AllowedWindow | null {
  if (value === 'off') return null;
  const m = /^\s*(\d\d:\d\d)\s*-\s*(\d\d:\d\d)(?:\s+(\S+))?\s*$/.exec(value);
  if (!m) throw new UsageError(`--window must look like "22:00-06:00 Europe/Berlin" (time zone optional, default UTC) or off (got "${value}")`);
  return { start: m[1], end: m[2], timeZone: m[3] ?? 'UTC' };
}

/** Help text for set-limits flags, from the same bounds the spec schema and the workflow enforce. */
export const LIMIT_FLAG_HELP = {
  concurrency: `partitions in flight (${LIMIT_BOUNDS.concurrency.min}-${LIMIT_BOUNDS.concurrency.max})`,
  chunkSize: `rows per chunk (${LIMIT_BOUNDS.chunkSize.min}-${LIMIT_BOUNDS.chunkSize.max})`,
};
