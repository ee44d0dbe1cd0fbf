/**
 * The canary: its partitions alone, then its gates; nothing else is written before they pass.
 * A failed canary, or one that waits for approval, holds the run until approve or cancel.
 */
import { condition } from '@temporalio/workflow';
import * as gates from '../gate-state';
import * as control from '../control-state';
import { judged } from './proxies';
import type { RunExecution } from './execution';

export async function runCanary(x: RunExecution): Promise<void> {
  const drainedAfterCancel = () => x.s.cancelRequested && x.s.inFlight.length === 0;
  while (x.s.canary?.phase === 'running' && !drainedAfterCancel()) {
    await condition(
      () => control.isDirty(x.s) || gates.canaryFinished(x.s) || gates.canaryCanLaunch(x.s) || drainedAfterCancel() || x.historyFull() || x.startFailed,
    );
    x.rethrowStartFailure();
    if (control.isDirty(x.s)) {
      await x.syncControl();
      continue;
    }
    if (gates.canaryFinished(x.s)) {
      const partitionIds = x.s.canary.partitions;
      const verdict = await judged('the canary check', () => x.checks.checkCanary({ database: x.database, runId: x.runId, partitionIds }));
      x.s = gates.canaryJudged(x.s, verdict, x.spec.validate?.canary?.approve === true, x.runId, x.eventId());
      await x.syncControl();
      return;
    }
    if (x.historyFull()) await x.continueIfFull();
    if (!gates.canaryCanLaunch(x.s)) continue;
    const next = gates.canaryLaunched(x.s);
    x.s = next.s;
    if (x.s.inFlight.includes(next.id)) await x.launch(next.id);
    x.publishNow();
  }
}

/** Held by a failed canary, or for approval: only approve or cancel ends it. */
export async function holdWhileHeld(x: RunExecution): Promise<void> {
  while (x.s.canary?.phase === 'held' && !x.s.cancelRequested) {
    await condition(() => control.isDirty(x.s) || x.s.canary?.phase !== 'held' || x.s.cancelRequested || x.historyFull());
    if (control.isDirty(x.s)) await x.syncControl();
    else if (x.historyFull()) await x.continueIfFull();
  }
}
