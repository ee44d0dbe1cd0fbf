/**
 * Operating a running run: pause, resume, cancel and set-limits, each an update of the run
 * workflow. Each is refused as a UsageError when the run's state does not allow it (checked
 * here from the ledger, then by the workflow's validator); the workflow records every action,
 * with its actor and reason, in backfill.run_events. Each returns once the ledger shows the
 * change, i.e. once running partitions can see it.
 */
import { executeUpdate, startUpdate } from '../temporal/update-across-continue-as-new';
import { resolveSpec } from '../specs/resolve';
import { WorkflowUpdateFailedError, WorkflowUpdateRPCTimeoutOrCancelledError, type Client } from '@temporalio/client';
import type pg from 'pg';
import { acceptInputs, type RunRow } from '../ledger/runs';
import { readRunControl } from '../ledger/run-control';
import { closeAbandonedRun } from '../ledger/run-attempts';
import { runLabel } from '../domain/labels';
import { limitsChangeProblem } from '../domain/limits';
import { ACTIVE_RUN_STATUSES } from '../domain/statuses';
import type { Limits, LimitsChange, OperatorAction } from '../domain/types';
import { pollUntil } from '../util/poll-until';
import {
  approveUpdate,
  cancelSignal,
  cancelUpdate,
  pauseSignal,
  pauseUpdate,
  progressQuery,
  resumeSignal,
  resumeUpdate,
  setLimitsUpdate,
} from '../workflows/messages';
import { UsageError } from '../domain/usage-error';
import { withTransaction } from '../db/pool';
import { workflowFailureCause } from './run-workflow';
import { recordEvent } from '../ledger/events';
import { inputChanges } from '../preflight/input-fingerprints';
import { runInputs } from '../preflight/run-inputs';

export type ControlAction = 'pause' | 'resume' | 'cancel';

export interface Operated {
  client: Client;
  pool: pg.Pool;
}

/**
 * Sends pause, resume or cancel. Resolves `applied: true` once the ledger reflects it;
 * false when no worker answered within `timeoutMs` (it was sent as a signal, which is in the
 * run's history and applies when a worker takes the run).
 */
export async function controlRun(
  { client, pool }: Operated,
  run: RunRow,
  action: ControlAction,
  who: OperatorAction,
  timeoutMs = 30_000,
  options: { acceptInputChange?: boolean; confirm?: () => Promise<void> } = {},
): Promise<{ applied: boolean; ended?: { status: string; why: string } }> {
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
  // asked once the action is known to apply: a refusal is said first, and nothing is done before the answer
  await options.confirm?.();
  const ended = await endedWorkflow(client, run);
  if (ended) {
    if (action !== 'cancel')
      throw new UsageError(
        `run ${ref}'s workflow ended ${ended.status} without finishing the run (${ended.why}); the ledger still shows it ${run.status}: ` +
          `close it with: backfill cancel ${run.run_id} --reason "…", then start it again`,
      );
    await closeEnded(pool, run, ended, who);
    return { applied: true, ended };
  }
  return sendControl(client, pool, run, action, who, timeoutMs);
}

/**
 * The action as an update: the workflow's validator refuses it at once with the reason when it
 * does not apply (a UsageError here), and it answers once the ledger holds the change. A
 * `cancel` is followed by Temporal's own cancellation, so the execution ends Canceled. Two
 * cases fall back to the signal, which Temporal keeps until a worker takes it: a worker built
 * before the updates existed, and no worker answering within `timeoutMs`.
 */
async function sendControl(
  client: Client,
  pool: pg.Pool,
  run: RunRow,
  action: ControlAction,
  who: OperatorAction,
  timeoutMs: number,
): Promise<{ applied: boolean }> {
  const handle = client.workflow.getHandle(run.workflow_id);
  const update = { pause: pauseUpdate, resume: resumeUpdate, cancel: cancelUpdate }[action];
  const args = action === 'cancel' ? { ...who, thenTemporalCancel: true } : who;
  try {
    const accepted = await client.withDeadline(Date.now() + timeoutMs, () => startUpdate(handle, update, args));
    // the run is cancelling either way; without Temporal's cancel its execution ends Completed, a minute later
    if (action === 'cancel') await handle.cancel().catch(() => undefined);
    await accepted.result();
    return { applied: true };
  } catch (err) {
    if (!fallsBackToSignal(err)) {
      if (err instanceof WorkflowUpdateFailedError)
        throw new UsageError(`cannot ${action} ${runLabel(run.name, run.run_id)}: ${err.cause?.message ?? err.message}`);
      throw err;
    }
  }
  const signal = { pause: pauseSignal, resume: resumeSignal, cancel: cancelSignal }[action];
  await handle.signal(signal, who);
  const applied = await pollUntil(
    async () => {
      const control = await readRunControl(pool, run.run_id);
      const seen = action === 'pause' ? control.paused : action === 'resume' ? !control.paused : control.cancelRequested;
      return seen ? true : undefined;
    },
    { timeoutMs: Math.min(timeoutMs, 5_000), intervalMs: 200 },
  );
  return { applied: applied === true };
}

/**
 * Whether an update's failure leaves the signal to do the job: no worker answered before the
 * deadline (the SDK's one error for it, whether the client gave up with DEADLINE_EXCEEDED or the
 * server first with CANCELLED), or the worker's code predates the update.
 */
export function fallsBackToSignal(err: unknown): boolean {
  if (err instanceof WorkflowUpdateRPCTimeoutOrCancelledError) return true;
  return err instanceof WorkflowUpdateFailedError && /no registered handler for update/i.test(err.cause?.message ?? err.message);
}

/**
 * A run whose transform's inputs changed resumes only with the operator's explicit acceptance:
 * the fingerprints as they are now become the run's, and the event records who accepted which
 * change and why, in one transaction, before the resume signal is sent.
 */
async function settleInputChange(pool: pg.Pool, run: RunRow, who: OperatorAction, accept: boolean): Promise<void> {
  const ref = runLabel(run.name, run.run_id);
  const accepted = run.input_fingerprints ?? [];
  const now = accepted.length > 0 ? await runInputs(pool, resolveSpec(run.spec), run.shape) : [];
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
 * The run's workflow, if it has ended while the ledger shows the run active: a step the
 * database refused for good fails the workflow before it can record the outcome, and a
 * workflow may be terminated by hand. No signal reaches it any more.
 */
export async function endedWorkflow(client: Client, run: Pick<RunRow, 'workflow_id'>): Promise<{ status: string; why: string } | undefined> {
  const handle = client.workflow.getHandle(run.workflow_id);
  const described = await handle.describe().catch(() => undefined);
  if (!described || described.status.name === 'RUNNING') return undefined;
  const why =
    described.status.name === 'FAILED'
      ? await handle.result().then(
          () => 'no failure recorded',
          (err: Error) => workflowFailureCause(err)?.message ?? err.message,
        )
      : `${described.status.name.toLowerCase()} outside backfill`;
  return { status: described.status.name, why };
}

/** `cancel` of a run whose workflow has ended: the ledger is closed in its stead, saying why and who. */
async function closeEnded(pool: pg.Pool, run: RunRow, ended: { status: string; why: string }, who: OperatorAction): Promise<void> {
  await withTransaction(pool, async (client) => {
    await closeAbandonedRun(
      client,
      run.run_id,
      `the run's workflow ended ${ended.status} before finishing the run: ${ended.why}; closed by ${who.actor} with backfill cancel`,
    );
    await recordEvent(client, { runId: run.run_id, key: 'closed-after-workflow-ended', kind: 'closed', actor: who.actor, reason: who.reason, detail: ended });
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
    return await executeUpdate(client.workflow.getHandle(run.workflow_id), setLimitsUpdate, change);
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
    await executeUpdate(client.workflow.getHandle(run.workflow_id), approveUpdate, who);
  } catch (err) {
    if (err instanceof WorkflowUpdateFailedError) throw new UsageError(`cannot approve ${ref}: ${err.cause?.message ?? err.message}`);
    throw err;
  }
}
