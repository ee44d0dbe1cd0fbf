/**
 * backfillFleetWorkflow: one backfill over many databases (docs/fleets.md). Each member is a
 * child run workflow, exactly a single-database run of its own spec (its ledger in its own
 * database, pinned to that database's identity, its activities on that database's queue); this
 * workflow only decides when each member starts — in waves, at most `concurrency` at once, a
 * person's approval between waves where asked — and what a member's failure does. Its state and
 * every change to it live in fleet/fleet-state.ts.
 *
 * - Children are started with ParentClosePolicy.REQUEST_CANCEL: a fleet terminated by hand
 *   leaves no member writing on its own; each turns the cancellation into an orderly cancel.
 * - Operator decisions change the fleet's state first and are then passed on to the running
 *   members by signal, by workflow id (so a member that continued-as-new still gets them).
 * - A Temporal cancellation of this workflow is turned into an orderly cancel.
 */
import {
  ApplicationFailure,
  CancellationScope,
  CancelledFailure,
  ChildWorkflowFailure,
  condition,
  getExternalWorkflowHandle,
  log,
  ParentClosePolicy,
  setCurrentDetails,
  setHandler,
  startChild,
  upsertMemo,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import type { SignalDefinition } from '@temporalio/common';
import { FailureType } from '../domain/failures';
import { runWorkflowId } from '../domain/ids';
import type { OperatorAction } from '../domain/types';
import * as fleet from './fleet/fleet-state';
import { renderFleetMarkdown } from './fleet/fleet-markdown';
import { memberRunInput, type FleetResult, type FleetStatus, type FleetWorkflowInput, type MemberOutcome } from './fleet/input';
import {
  approveWaveUpdate,
  FLEET_HANDLER_DESCRIPTIONS,
  fleetCancelUpdate,
  fleetPauseUpdate,
  fleetProgressQuery,
  fleetResumeUpdate,
  type FleetControlOutcome,
} from './fleet/messages';
import { cancelSignal, pauseSignal, resumeSignal } from './messages';
import type { RunResult } from './run/input';
import { BackfillName, BackfillRunId, BackfillStatus } from './search-attributes';

export type { FleetResult, FleetWorkflowInput } from './fleet/input';

export async function backfillFleetWorkflow(input: FleetWorkflowInput): Promise<FleetResult> {
  const { record } = input;
  let s = fleet.initialFleet(input, (runId) => runWorkflowId(record.name, runId));
  let finished = false;
  let cancelledByTemporal = false;
  const now = () => new Date().toISOString();
  const status = (): FleetStatus => fleet.fleetStatus(s, finished);
  const show = () => setCurrentDetails(renderFleetMarkdown(record, s, status()));

  /** Passes an operator's decision on to every running member; a member that already ended is no error. */
  const forward = async (signal: SignalDefinition<[OperatorAction?]>, who: OperatorAction, members = fleet.running(s)) => {
    const action = { actor: who.actor, reason: `fleet ${record.fleetId}${who.reason ? `: ${who.reason}` : ''}` };
    await Promise.all(
      members.map((m) =>
        getExternalWorkflowHandle(m.workflowId)
          .signal(signal, action)
          .catch((err) => log.warn('could not pass a decision on to a member', { member: m.variable, error: (err as Error).message })),
      ),
    );
  };
  const control = (action: fleet.FleetControl, apply: (who: OperatorAction) => void, signal?: SignalDefinition<[OperatorAction?]>) => ({
    validator: (_who: OperatorAction) => {
      const refusal = fleet.controlRefusal(s, record.fleetId, action, finished);
      if (refusal) throw new Error(refusal);
    },
    handler: async (who: OperatorAction): Promise<FleetControlOutcome> => {
      apply(who);
      show();
      const members = fleet.running(s);
      if (signal) await forward(signal, who, members);
      return { status: status(), members: members.map((m) => m.variable) };
    },
  });
  const pausing = control('pause', (who) => (s = fleet.pause(s, who, now())), pauseSignal);
  setHandler(fleetPauseUpdate, pausing.handler, { validator: pausing.validator, description: FLEET_HANDLER_DESCRIPTIONS.pause });
  const resuming = control('resume', (who) => (s = fleet.resume(s, who, now())), resumeSignal);
  setHandler(fleetResumeUpdate, resuming.handler, { validator: resuming.validator, description: FLEET_HANDLER_DESCRIPTIONS.resume });
  const cancelling = control('cancel', (who) => (s = fleet.requestCancel(s, who, now())), cancelSignal);
  setHandler(fleetCancelUpdate, cancelling.handler, { validator: cancelling.validator, description: FLEET_HANDLER_DESCRIPTIONS.cancel });
  const approving = control('approve', (who) => (s = fleet.approveWave(s, who, now())));
  setHandler(approveWaveUpdate, approving.handler, { validator: approving.validator, description: FLEET_HANDLER_DESCRIPTIONS.approve });
  setHandler(fleetProgressQuery, () => ({ record, input, attempt: input.attempt ?? 1, status: status(), state: s }), {
    description: FLEET_HANDLER_DESCRIPTIONS.progress,
  });
  CancellationScope.current().cancelRequested.catch(() => {
    cancelledByTemporal = true;
    if (finished || s.cancelRequested) return;
    const who = { actor: 'temporal', reason: 'workflow cancellation requested' };
    s = fleet.requestCancel(s, who, now());
    void CancellationScope.nonCancellable(() => forward(cancelSignal, who));
  });

  let shownStatus: string | undefined = workflowInfo().typedSearchAttributes.get(BackfillStatus);
  /** Details and the status search attribute; from the main loop only (an upsert is a command). */
  const publish = () => {
    show();
    if (shownStatus !== status()) upsertSearchAttributes([{ key: BackfillStatus, value: (shownStatus = status()) }]);
  };

  async function runMember(m: MemberOutcome): Promise<void> {
    s = fleet.memberStarted(s, m.variable, now());
    const plan = input.members.find((p) => p.variable === m.variable)!;
    const runInput = memberRunInput(input, plan, s.approvals[m.wave]?.actor);
    try {
      const child = await startChild('backfillRunWorkflow', {
        workflowId: m.workflowId,
        args: [runInput],
        parentClosePolicy: ParentClosePolicy.REQUEST_CANCEL,
        typedSearchAttributes: [
          { key: BackfillName, value: record.name },
          { key: BackfillRunId, value: m.runId },
          { key: BackfillStatus, value: 'pending' },
        ],
        memo: { database: m.variable, databaseQueue: plan.databaseQueue, fleetId: record.fleetId },
        staticSummary: `${record.name} on ${m.variable} (fleet ${record.fleetId}, wave ${m.wave})`,
      });
      // a decision taken while the member was being started reaches it too
      if (s.cancelRequested) await forward(cancelSignal, s.cancelRequested, [m]);
      else if (s.paused) await forward(pauseSignal, s.paused, [m]);
      const result = (await child.result()) as RunResult;
      const ended = result.status === 'succeeded' || result.status === 'cancelled' ? result.status : 'failed';
      s = fleet.memberFinished(s, m.variable, { status: ended, result }, now());
    } catch (err) {
      s = fleet.memberFinished(s, m.variable, outcomeOf(err), now());
    }
    show();
  }

  return CancellationScope.nonCancellable(async () => {
    const members: Promise<void>[] = [];
    for (let next = fleet.nextWave(s); next; next = fleet.nextWave(s)) {
      s = next;
      publish();
      await condition(() => s.awaitingApproval === undefined);
      for (;;) {
        await condition(() => fleet.nextToStart(s) !== undefined || fleet.waveDone(s) || fleet.startsNoMore(s));
        const m = fleet.nextToStart(s);
        if (!m) break;
        members.push(runMember(m));
        publish();
      }
      if (fleet.startsNoMore(s)) break;
    }
    await Promise.all(members);
    s = fleet.closeUnstarted(s);
    finished = true;
    publish();
    const result = fleet.fleetResult(record.fleetId, s);
    if (cancelledByTemporal && result.status === 'cancelled') {
      upsertMemo({ result });
      throw new CancelledFailure(`fleet ${record.name}/${record.fleetId} cancelled`);
    }
    if (result.status === 'failed')
      throw ApplicationFailure.create({ message: failureSummary(result), type: FailureType.FleetFailed, nonRetryable: true, details: [result] });
    return result;
  });
}

/** What a member's run ending with a failure says: its result when it ran and failed, else why it could not run. */
function outcomeOf(err: unknown): { status: 'failed' | 'cancelled'; result?: RunResult; error?: string } {
  const cause = err instanceof ChildWorkflowFailure ? err.cause : err;
  if (cause instanceof CancelledFailure) return { status: 'cancelled' };
  if (cause instanceof ApplicationFailure && cause.type === FailureType.RunFailed) {
    const result = cause.details?.[0] as RunResult | undefined;
    if (result?.status === 'cancelled') return { status: 'cancelled', result };
    return { status: 'failed', ...(result ? { result } : {}), error: cause.message };
  }
  const inner = (cause as Error & { cause?: Error })?.cause;
  return { status: 'failed', error: inner?.message ?? (cause as Error)?.message ?? String(err) };
}

function failureSummary(result: FleetResult): string {
  const failed = result.members.filter((m) => m.status === 'failed').map((m) => m.variable);
  const notStarted = result.members.filter((m) => m.status === 'not-started').map((m) => m.variable);
  return [
    `fleet ${result.fleetId} failed`,
    failed.length > 0 ? `member(s) failed: ${failed.join(', ')}` : undefined,
    notStarted.length > 0 ? `not started: ${notStarted.join(', ')}` : undefined,
  ]
    .filter(Boolean)
    .join('; ');
}
