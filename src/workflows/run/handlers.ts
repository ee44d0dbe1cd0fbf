/**
 * The run's signals, queries and updates. Operator decisions change the state here first; the
 * phases' loops then write them to the ledger (syncControl), which running partitions read.
 * Handlers only show details: search attributes are commands and change in the loops.
 */
import { CancellationScope, condition, setHandler } from '@temporalio/workflow';
import type { ControlOutcome, OperatorAction, PartitionReport } from '../../domain/types';
import {
  approveUpdate,
  cancelSignal,
  cancelUpdate,
  HANDLER_DESCRIPTIONS,
  partitionConditionSignal,
  partitionFinishedSignal,
  partitionsFinishedSignal,
  pauseSignal,
  pauseUpdate,
  progressQuery,
  resumeSignal,
  resumeUpdate,
  setLimitsUpdate,
} from '../messages';
import * as gates from '../gate-state';
import * as run from '../run-state';
import * as control from '../control-state';
import type { RunExecution } from './execution';

export function installHandlers(x: RunExecution): void {
  setHandler(pauseSignal, (a) => void (x.s = control.pause(x.s, a, x.eventId())), { description: HANDLER_DESCRIPTIONS.pause });
  setHandler(resumeSignal, (a) => void (x.s = control.resume(x.s, a, x.eventId())), { description: HANDLER_DESCRIPTIONS.resume });
  setHandler(cancelSignal, (a) => void (x.s = control.requestCancel(x.s, a, x.eventId())), { description: HANDLER_DESCRIPTIONS.cancel });
  const operatorControl = <A extends OperatorAction>(action: control.OperatorControl, apply: (who: A) => void) => ({
    handler: async (who: A): Promise<ControlOutcome> => {
      apply(who);
      await untilSynced(x);
      return { status: run.shownStatus(x.s), paused: x.s.paused, cancelRequested: x.s.cancelRequested };
    },
    validator: (_who: A) => {
      const refusal = control.controlRefusal(x.s, x.runId, action, x.finishing);
      if (refusal) throw new Error(refusal);
    },
  });
  const pausing = operatorControl('pause', (who) => void (x.s = control.pause(x.s, who, x.eventId())));
  setHandler(pauseUpdate, pausing.handler, { validator: pausing.validator, description: HANDLER_DESCRIPTIONS.pauseUpdate });
  const resuming = operatorControl('resume', (who) => void (x.s = control.resume(x.s, who, x.eventId())));
  setHandler(resumeUpdate, resuming.handler, { validator: resuming.validator, description: HANDLER_DESCRIPTIONS.resumeUpdate });
  const cancelling = operatorControl('cancel', (who) => void (x.s = control.requestCancel(x.s, who, x.eventId())));
  setHandler(cancelUpdate, cancelling.handler, { validator: cancelling.validator, description: HANDLER_DESCRIPTIONS.cancelUpdate });
  // a report of a partition not in flight is a duplicate, or came before its launch (kept for it: run-state applyReport)
  setHandler(partitionFinishedSignal, (report) => applyReport(x, report), { description: HANDLER_DESCRIPTIONS.partitionFinished });
  setHandler(partitionsFinishedSignal, (reports) => reports.forEach((report) => applyReport(x, report)), {
    description: HANDLER_DESCRIPTIONS.partitionsFinished,
  });
  setHandler(partitionConditionSignal, (c) => ((x.s = run.applyCondition(x.s, c)), x.reportsApplied++, x.show()), {
    description: HANDLER_DESCRIPTIONS.partitionCondition,
  });
  setHandler(progressQuery, () => x.progress(), { description: HANDLER_DESCRIPTIONS.progress });
  setHandler(
    setLimitsUpdate,
    async (change) => {
      x.s = control.changeLimits(x.s, change, x.eventId());
      await untilSynced(x);
      return x.s.limits;
    },
    {
      // a rejected update leaves nothing in history
      validator: (change) => {
        const refusal = control.limitsChangeRefusal(x.s, x.runId, change, x.finishing);
        if (refusal) throw new Error(refusal);
      },
      description: HANDLER_DESCRIPTIONS.setLimits,
    },
  );
  setHandler(
    approveUpdate,
    async (who) => {
      x.s = gates.approve(x.s, who, x.eventId());
      await untilSynced(x);
    },
    {
      validator: (_who: OperatorAction) => {
        const refusal = gates.approveRefusal(x.s, x.runId);
        if (refusal) throw new Error(refusal);
      },
      description: HANDLER_DESCRIPTIONS.approve,
    },
  );
  // an operator cancelling the workflow in the UI or CLI gets the same orderly stop as the cancel signal
  CancellationScope.current().cancelRequested.catch(() => {
    x.s = control.requestCancel(x.s, { actor: 'temporal', reason: 'workflow cancellation requested' }, x.eventId(), true);
  });
}

export function applyReport(x: RunExecution, report: PartitionReport): void {
  // a report came from a worker on the run's database: it is served (run/worker-watch.ts)
  x.s = run.workerGapSeen(run.applyReport(x.s, report, x.reportRules), undefined);
  x.reportsApplied++;
  x.show();
}

/**
 * An update returns once the ledger holds its change: from then on every chunk that starts uses
 * it. Temporal's cancellation of the run (which `backfill cancel` sends right after its update)
 * must not cancel the wait: the run stops in order, and the update still answers.
 */
async function untilSynced(x: RunExecution): Promise<void> {
  const version = x.s.controlVersion;
  await CancellationScope.nonCancellable(() => condition(() => x.s.syncedVersion >= version));
}
