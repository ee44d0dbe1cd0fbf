/**
 * The run's main loop: keeps at most `limits.concurrency` partitions in flight, a sliding window
 * over the plan paged from the ledger. With a ramp, the next partition waits while it lies
 * beyond the running stage, and each finished stage is checked before the next begins. With
 * `limits.splitTail`, a slot left with nothing to start takes half of a running partition.
 */
import { condition, patched } from '@temporalio/workflow';
import * as gates from '../gate-state';
import * as run from '../run-state';
import * as control from '../control-state';
import { wantsSplit } from '../split-state';
import { judged } from './proxies';
import { splitTail } from './split-tail';
import type { RunExecution } from './execution';

export async function runPartitions(x: RunExecution): Promise<void> {
  const beyondStage = () => x.queue.length > 0 && x.queue[0].ordinal >= gates.rampCutoff(x.s);
  const stageFinished = () => beyondStage() && gates.rampStageFinished(x.s, x.queue[0].ordinal);
  const splitDue = () => wantsSplit(x.s, x.planLeft(), x.splitTried);
  for (;;) {
    await condition(
      () =>
        control.isDirty(x.s) ||
        run.isFinished(x.s, x.planLeft()) ||
        (run.canLaunch(x.s, x.planLeft()) && !beyondStage()) ||
        stageFinished() ||
        splitDue() ||
        x.historyFull() ||
        x.startFailed,
    );
    x.rethrowStartFailure();
    if (control.isDirty(x.s)) {
      await x.syncControl();
      continue;
    }
    if (run.isFinished(x.s, x.planLeft())) return;
    if (x.historyFull()) await x.continueIfFull();
    if (stageFinished()) {
      await checkStage(x);
      continue;
    }
    if (splitDue()) {
      await splitTail(x);
      continue;
    }
    if (beyondStage() || !run.canLaunch(x.s, x.planLeft())) continue;
    if (x.queue.length === 0) {
      await x.nextPage();
      continue;
    }
    const next = x.queue.shift()!;
    // the first plan page is read before the canary is picked; executions recorded before the
    // patch launched the canary's partitions again and counted their reports twice
    if (gates.ranInCanary(x.s, next.id) && patched('canary-runs-once')) {
      x.s = run.passedOver(x.s, next);
      continue;
    }
    x.s = run.launched(x.s, next);
    const size = x.groupSize(x.s.limits.concurrency - x.s.inFlight.length + 1);
    if (size > 1) {
      // small partitions of a run of many: the plan's next ones that may start now go in one workflow
      const group = x.s.inFlight.includes(next.id) ? [next.id] : [];
      while (group.length < size && x.queue.length > 0 && run.canLaunch(x.s, true) && !beyondStage() && !gates.ranInCanary(x.s, x.queue[0].id)) {
        const more = x.queue.shift()!;
        x.s = run.launched(x.s, more);
        if (x.s.inFlight.includes(more.id)) group.push(more.id);
      }
      if (group.length > 1) x.launchGroup(group);
      else if (group.length === 1) await x.launch(group[0]);
      x.publishNow();
      continue;
    }
    // its report came before this launch (the workflow task that first launched it was lost): it is settled
    if (x.s.inFlight.includes(next.id)) await x.launch(next.id);
    x.publishNow();
  }
}

async function checkStage(x: RunExecution): Promise<void> {
  const r = x.s.ramp!;
  const stage = {
    database: x.database,
    runId: x.runId,
    stage: r.stage + 1,
    fromOrdinal: r.stage === 0 ? 0 : r.cutoffs[r.stage - 1],
    toOrdinal: r.cutoffs[r.stage],
  };
  const verdict = await judged(`the check of ramp stage ${stage.stage}`, () => x.checks.checkStage(stage));
  x.s = gates.rampJudged(x.s, verdict, x.runId, x.eventId());
  await x.syncControl();
}
