/**
 * Temporal's own floor for this project's shape, with nothing of the project in it: a parent
 * keeps `concurrency` children in flight, each child runs one no-op activity. Two variants:
 * - bareFanOut: each child completes into the parent's history (executeChild);
 * - signalFanOut: the child's activity signals the parent and the child then completes
 *   unobserved, as a partition reports to its run;
 * - startedFanOut: as signalFanOut, but the parent starts each child as a workflow of its own
 *   from a local activity (a client call), so no child event reaches the parent's history: the
 *   floor of a run that starts its partitions that way.
 * - batchedFanOut: as startedFanOut, but each workflow started carries `batch` items, each a
 *   local activity that signals the parent: what Temporal's part would cost if partitions were
 *   started several to a workflow (bench/servers.ts, part f);
 * - reportedFanOut: as batchedFanOut, but the workflow reports its items in one signal once
 *   all are done.
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
const { startIndependent, startBatch } = proxyLocalActivities<{
  startIndependent(workflowId: string, parentId: string): Promise<void>;
  startBatch(workflowId: string, parentId: string, items: number, together: boolean): Promise<void>;
}>({
  startToCloseTimeout: '1 minute',
});
const local = proxyLocalActivities<{ noop(): Promise<void>; report(parentId: string, items?: number): Promise<void> }>({
  startToCloseTimeout: '1 minute',
});
const GENERATION = 1000;
/** An item done, or `items` of them. */
export const childDone = defineSignal<[number?]>('childDone');

export interface FanOutInput {
  children: number;
  concurrency: number;
  prefix: string;
  from?: number;
  /** Items a started workflow carries (batchedFanOut); 1 elsewhere. */
  batch?: number;
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

/** A workflow of `items` items, run at once, each a local activity that reports to the parent. */
export async function batchChild(parentId: string, items: number): Promise<void> {
  await Promise.all(Array.from({ length: items }, () => local.report(parentId)));
}

export async function batchedFanOut(input: FanOutInput): Promise<number> {
  const parentId = workflowInfo().workflowId;
  return fanOutBySignal(input, (workflowId, items) => void startBatch(workflowId, parentId, items, false));
}

/** A workflow of `items` items, run at once as local activities, reported together when all are done. */
export async function reportedBatchChild(parentId: string, items: number): Promise<void> {
  await Promise.all(Array.from({ length: items }, () => local.noop()));
  await local.report(parentId, items);
}

export async function reportedFanOut(input: FanOutInput): Promise<number> {
  const parentId = workflowInfo().workflowId;
  return fanOutBySignal(input, (workflowId, items) => void startBatch(workflowId, parentId, items, true));
}

/** Keeps `concurrency` items in flight, started `batch` at a time by `start` and each counted back by its childDone signal. */
async function fanOutBySignal(input: FanOutInput, start: (workflowId: string, items: number) => void): Promise<number> {
  const from = input.from ?? 0;
  const to = Math.min(input.children, from + GENERATION);
  const batch = input.batch ?? 1;
  let inFlight = 0;
  setHandler(childDone, (items) => void (inFlight -= items ?? 1));
  for (let i = from; i < to; i += batch) {
    const items = Math.min(batch, to - i);
    await condition(() => inFlight + items <= input.concurrency);
    inFlight += items;
    start(`${input.prefix}-${i}`, items);
  }
  await condition(() => inFlight === 0);
  // continues as the workflow type that called it
  if (to < input.children) await continueAsNew<typeof signalFanOut>({ ...input, from: to });
  return input.children;
}
