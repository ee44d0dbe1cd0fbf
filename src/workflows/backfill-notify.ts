/**
 * backfillNotifyWorkflow (docs/operating.md "Told when a run needs you"): one per run attempt whose spec has
 * `notify:`, started by the run's workflow as an abandoned child, so that a receiver that fails or
 * hangs never fails or slows the run. Every `pollMs` it reads what the run's ledger recorded since
 * its last look (src/notify/moments.ts decides what is a moment), tells each target the moments it
 * asked for, in the order they happened — each delivery an activity with Temporal's retries, its outcome in the ledger — and
 * tells `held` once a run has been held longer than a target's `heldMinutes`. It ends once the
 * run's end was told; it continues as new before its history grows long.
 */
import { continueAsNew, patched, proxyActivities, sleep } from '@temporalio/workflow';
import type { Activities } from '../activities';
import type { NotifyTarget } from '../specs/notify-schema';
import { eventsOf, FINISHED, heldMinutesOf, heldMoment, inTellingOrder, momentsOf, type Moment } from '../notify/moments';

export interface NotifyWorkflowInput {
  database: string;
  /** The run's database queue (routing); absent: this workflow's own. */
  databaseQueue?: string;
  runId: string;
  name: string;
  targets: NotifyTarget[];
  pollMs?: number;
  /** Carried over continue-as-new. */
  state?: NotifyState;
}

interface NotifyState {
  afterSeq: string;
  told: string[];
  /** When the run was first seen held in the current hold (workflow time, ms), and the targets told of it. */
  heldSince?: number;
  heldTold: number[];
}

const LOOKS_PER_EXECUTION = 400;

export async function backfillNotifyWorkflow(input: NotifyWorkflowInput): Promise<void> {
  const queue = input.databaseQueue ? { taskQueue: input.databaseQueue } : {};
  const ledger = proxyActivities<Activities>({ ...queue, startToCloseTimeout: '1 minute', retry: { initialInterval: '1s', maximumInterval: '1 minute' } });
  // about an hour of retries, then given up (the ledger says `failing`): a receiver that is down must not hold the notifier forever
  const delivery = proxyActivities<Activities>({
    ...queue,
    startToCloseTimeout: '30 seconds',
    retry: { initialInterval: '5s', backoffCoefficient: 2, maximumInterval: '5 minutes', maximumAttempts: 16, nonRetryableErrorTypes: ['NotificationRefused'] },
  });
  const run = { name: input.name, runId: input.runId };
  const s: NotifyState = input.state ?? { afterSeq: '0', told: [], heldTold: [] };
  const told = new Set(s.told);
  const deliveries: Promise<unknown>[] = [];
  // each target hears its moments in the order they happened (a partition that failed before the
  // first look is told after `started`, not beside it); targets do not wait for one another.
  // Executions recorded before this delivered a look's moments side by side.
  const inOrder = patched('notify-in-order');
  const lastTo = new Map<number, Promise<unknown>>();
  const tell = (moment: Moment, targets: number[]) => {
    told.add(moment.key);
    for (const i of targets) {
      const deliver = () =>
        delivery
          .deliverNotification({
            database: input.database,
            runId: input.runId,
            name: input.name,
            moment,
            target: input.targets[i],
            targetIndex: i,
          })
          .catch(() => undefined);
      const delivered = inOrder ? (lastTo.get(i) ?? Promise.resolve()).then(deliver) : deliver();
      lastTo.set(i, delivered);
      deliveries.push(delivered);
    }
  };
  const subscribed = (kind: Moment['kind']) => input.targets.map((t, i) => (eventsOf(t).includes(kind) ? i : -1)).filter((i) => i >= 0);

  for (let look = 0; ; look++) {
    const m = await ledger.readRunMoments({ database: input.database, runId: input.runId, afterSeq: s.afterSeq });
    if (m.events.length > 0) s.afterSeq = m.events[m.events.length - 1].seq;
    const found = momentsOf(run, m, told);
    const moments = inOrder ? inTellingOrder(found) : found;
    for (const moment of moments) tell(moment, subscribed(moment.kind));
    // held: the run has had a partition held (running, not writing) since the first look that saw it
    if (m.held.length > 0) {
      s.heldSince ??= Date.now();
      for (const i of subscribed('held')) {
        if (s.heldTold.includes(i) || Date.now() - s.heldSince < heldMinutesOf(input.targets[i]) * 60_000) continue;
        s.heldTold.push(i);
        tell(heldMoment(run, m.held, s.heldSince, Date.now()), [i]);
      }
    } else {
      s.heldSince = undefined;
      s.heldTold = [];
    }
    // the end of this attempt was told (tell() records every moment's key)
    if (FINISHED.includes(m.status) && told.has(`finished:${m.attempt}`)) break;
    if (look >= LOOKS_PER_EXECUTION) {
      await Promise.all(deliveries);
      await continueAsNew<typeof backfillNotifyWorkflow>({ ...input, state: { ...s, told: [...told] } });
    }
    await sleep(input.pollMs ?? 15_000);
  }
  await Promise.all(deliveries);
}
