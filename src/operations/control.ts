/**
 * Operating a running run: pause, resume, cancel (signals) and set-limits (an update).
 * Each is refused as a UsageError when the run's state does not allow it; the workflow
 * records every action, with its actor and reason, in backfill.run_events. Each returns
 * once the ledger shows the change, i.e. once running partitions can see it.
 */
import { WorkflowUpdateFailedError, type Client } from '@temporalio/client';
import type pg from 'pg';
import { acceptInputs, readRunControl, type RunRow } from '../ledger/runs';
import { runLabel } from '../shared/labels';
import { limitsChangeProblem } from '../shared/limits';
import { ACTIVE_RUN_STATUSES } from '../shared/statuses';
import type { Limits, LimitsChange, OperatorAction } from '../shared/types';
import { pollUntil } from '../util/poll-until';
import { approveUpdate, cancelSignal, pauseSignal, progressQuery, resumeSignal, setLimitsUpdate } from '../workflows/messages';
import { UsageError } from './errors';
import { withTransaction } from '../db/pool';
import { recordEvent } from '../ledger/events';
import { inputChanges } from '../checks/input-fingerprints';
import { runInputs } from '../checks/run-inputs';

export type ControlAction = 'pause' | 'resume' | 'cancel';

export interface Operated {
  client: Client;
  pool: pg.Pool;
}

/**
 * Sends pause, resume or cancel. Resolves `applied: true` once the ledger reflects it;
 * false when it did not within `timeoutMs` (the signal is in the run's history anyway:
 * usually no worker is running).
 */
export async function controlRun(
  { client, pool }: Operated,
  run: RunRow,
  action: ControlAction,
  who: OperatorAction,
  timeoutMs = 30_000,
  options: { acceptInputChange?: boolean } = {},
): Promise<{ applied: boolean }> {
  const ref = runLabel(run.name, run.run_id);
  if (!ACTIVE_RUN_STATUSES.includes(run.status)) throw new UsageError(`run ${ref} already finished (${run.status}); there is nothing to ${action}`);
  if (action === 'resume' && !run.paused) throw new UsageError(`run ${ref} is not paused (${run.status}); nothing to resume`);
  if (action === 'pause' && run.paused) throw new UsageError(`run ${ref} is already paused; resume it with: backfill resume ${run.run_id}`);
  if (action === 'cancel' && run.cancel_requested) throw new UsageError(`run ${ref} is already being cancelled`);
  if (action === 'resume') {
    // a canary hold is lifted only by approve, which records who decided to expand
    const progress = await client.workflow
      .getHandle(run.workflow_id)
      .query(progressQuery)
      .catch(() => undefined);
    if (progress?.canary?.phase === 'held') throw new UsageError(`run ${ref} is held by its canary, not paused: ${progress.canary.held}`);
    if (progress?.ramp?.phase === 'held') throw new UsageError(`run ${ref} is held by a ramp stage, not paused: ${progress.ramp.held}`);
    await settleInputChange(pool, run, who, options.acceptInputChange === true);
  } else if (options.acceptInputChange) {
    throw new UsageError('--accept-input-change goes with resume');
  }
  const signal = { pause: pauseSignal, resume: resumeSignal, cancel: cancelSignal }[action];
  await client.workflow.getHandle(run.workflow_id).signal(signal, who);
  const applied = await pollUntil(
    async () => {
      const control = await readRunControl(pool, run.run_id);
      const seen = action === 'pause' ? control.paused : action === 'resume' ? !control.paused : control.cancelRequested;
      return seen ? true : undefined;
    },
    { timeoutMs, intervalMs: 200 },
  );
  return { applied: applied === true };
}

/**
 * A run whose transform's inputs changed resumes only with the operator's explicit acceptance:
 * the fingerprints as they are now become the run's, and the event records who accepted which
 * change and why, in one transaction, before the resume signal is sent.
 */
async function settleInputChange(pool: pg.Pool, run: RunRow, who: OperatorAction, accept: boolean): Promise<void> {
  const ref = runLabel(run.name, run.run_id);
  const accepted = run.input_fingerprints ?? [];
  const now = accepted.length > 0 ? await runInputs(pool, run.spec, run.shape) : [];
  const changes = inputChanges(accepted, now);
  if (changes.length === 0) {
    if (accept) throw new UsageError(`the inputs of ${ref} have not changed since the run started; resume without --accept-input-change`);
    return;
  }
  if (!accept) {
    throw new UsageError(
      `run ${ref} cannot resume as it is: input changed since the run started: ${changes.join('; ')}. ` +
        `To go on with the changed input: backfill resume ${run.run_id} --accept-input-change --reason "…"; or cancel it`,
    );
  }
  if (!who.reason) throw new UsageError(`accepting an input change of ${ref} needs --reason: it is kept in the audit record with who accepted`);
  await withTransaction(pool, async (client) => {
    await acceptInputs(client, run.run_id, now);
    await recordEvent(client, { runId: run.run_id, kind: 'input-change-accepted', actor: who.actor, reason: who.reason, detail: { changes } });
  });
}

/**
 * Changes a running run's limits through the workflow's setLimits update. The change is
 * checked here and again by the workflow's validator; a rejected change leaves nothing in
 * history. Resolves with the limits in force once running partitions can see them.
 */
export async function setRunLimits({ client }: Pick<Operated, 'client'>, run: RunRow, change: LimitsChange): Promise<Limits> {
  const ref = runLabel(run.name, run.run_id);
  const problem = limitsChangeProblem(change);
  if (problem) throw new UsageError(`cannot change the limits of ${ref}: ${problem}`);
  if (!ACTIVE_RUN_STATUSES.includes(run.status)) throw new UsageError(`run ${ref} already finished (${run.status}); its limits can no longer change`);
  try {
    return await client.workflow.getHandle(run.workflow_id).executeUpdate(setLimitsUpdate, { args: [change] });
  } catch (err) {
    if (err instanceof WorkflowUpdateFailedError) throw new UsageError(`cannot change the limits of ${ref}: ${err.cause?.message ?? err.message}`);
    throw err;
  }
}

/**
 * Lets a run held by its canary expand (validate.canary): refused unless it is held. The
 * approval, with its actor and reason, is in the ledger when this returns.
 */
export async function approveRun({ client }: Pick<Operated, 'client'>, run: RunRow, who: OperatorAction): Promise<void> {
  const ref = runLabel(run.name, run.run_id);
  if (!ACTIVE_RUN_STATUSES.includes(run.status)) throw new UsageError(`run ${ref} already finished (${run.status}); there is nothing to approve`);
  if (!who.reason) throw new UsageError(`approving ${ref} needs --reason: it is kept in the audit record with who approved`);
  try {
    await client.workflow.getHandle(run.workflow_id).executeUpdate(approveUpdate, { args: [who] });
  } catch (err) {
    if (err instanceof WorkflowUpdateFailedError) throw new UsageError(`cannot approve ${ref}: ${err.cause?.message ?? err.message}`);
    throw err;
  }
}
