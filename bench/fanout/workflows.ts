/**
 * Temporal's own floor for this project's shape, with nothing of the project in it: a parent
 * keeps `concurrency` children in flight, each child runs one no-op activity. Two variants:
 * - bareFanOut: each child completes into the parent's history (executeChild);
 * - signalFanOut: the child's activity signals the parent and the child then completes
 *   unobserved, as a partition reports to its run;
 * - startedFanOut: as signalFanOut, but the parent starts each child as a workflow of its own
 *   from a local activity (a client call), so no child event reaches the parent's history: the
 *   floor of a run that starts its partitions that way.
 * bench/small-partitions.ts runs both beside the backfill on the same server, so the backfill's
 * orchestration cost per partition is read as a ratio to them. Every GENERATION children the
 * parent drains and continues as new, so its history stays bounded at any size.
 */
import {
  ParentClosePolicy,
  condition,
  continueAsNew,
  defineSignal,
  executeChild,
  proxyActivities,
  proxyLocalActivities,
  setHandler,
  startChild,
  workflowInfo,
} from '@temporalio/workflow';

const { noop, report } = proxyActivities<{ noop(): Promise<void>; report(parentId: string): Promise<void> }>({ startToCloseTimeout: '1 minute' });
const { startIndependent } = proxyLocalActivities<{ startIndependent(workflowId: string, parentId: string): Promise<void> }>({
  startToCloseTimeout: '1 minute',
});
const GENERATION = 1000;
export const childDone = defineSignal('childDone');

export interface FanOutInput {
  children: number;
  concurrency: number;
  prefix: string;
  from?: number;
}

export async function bareChild(): Promise<void> {
  await noop();
}

export async function bareFanOut(input: FanOutInput): Promise<number> {
  const from = input.from ?? 0;
  const to = Math.min(input.children, from + GENERATION);
  let inFlight = 0;
  for (let i = from; i < to; i++) {
    await condition(() => inFlight < input.concurrency);
    inFlight++;
    // not waiting for each start: children launched in one activation start together
    void executeChild(bareChild, { workflowId: `${input.prefix}-${i}`, parentClosePolicy: ParentClosePolicy.ABANDON }).finally(() => void inFlight--);
  }
  await condition(() => inFlight === 0);
  if (to < input.children) await continueAsNew<typeof bareFanOut>({ ...input, from: to });
  return input.children;
}

export async function signallingChild(parentId: string): Promise<void> {
  await report(parentId);
}

export async function signalFanOut(input: FanOutInput): Promise<number> {
  const parentId = workflowInfo().workflowId;
  return fanOutBySignal(
    input,
    (workflowId) => void startChild(signallingChild, { workflowId, args: [parentId], parentClosePolicy: ParentClosePolicy.ABANDON }),
  );
}

export async function startedFanOut(input: FanOutInput): Promise<number> {
  const parentId = workflowInfo().workflowId;
  return fanOutBySignal(input, (workflowId) => void startIndependent(workflowId, parentId));
}

/** Keeps `concurrency` items in flight, each started by `start` and counted back by its childDone signal. */
async function fanOutBySignal(input: FanOutInput, start: (workflowId: string) => void): Promise<number> {
  const from = input.from ?? 0;
  const to = Math.min(input.children, from + GENERATION);
  let inFlight = 0;
  setHandler(childDone, () => void inFlight--);
  for (let i = from; i < to; i++) {
    await condition(() => inFlight < input.concurrency);
    inFlight++;
    start(`${input.prefix}-${i}`);
  }
  await condition(() => inFlight === 0);
  // continues as the workflow type that called it
  if (to < input.children) await continueAsNew<typeof signalFanOut>({ ...input, from: to });
  return input.children;
}
