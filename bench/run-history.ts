/**
 * Where a run's time goes outside its chunks, from its Temporal history (the run workflow's and
 * each partition workflow's event times): the client's `start` before the workflow exists, the
 * registration, the wait for the first partition's activity, each hand-over between partitions,
 * and the tail (the whole-run check, finalize, cleanup). The ledger's timeline
 * (bench/run-timeline.ts) cannot see these: they happen between its rows. The server must still
 * hold the history, so benchmarks call it right after the run.
 */
import type { Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { at, historyEvents, partitionTimes, partitionWorkflowIds, reportSignals, type HistoryEvent } from './partition-histories';

const EventType = temporal.api.enums.v1.EventType;

export interface RunHops {
  /** `start` called → the run workflow started: the spec's checks in the client, the ledger reads. */
  clientMs: number;
  /** Run workflow started → registerRun started. */
  toRegistrationMs: number;
  /** registerRun: the checks again on a worker, the scope count, the run's rows. */
  registrationMs: number;
  /** registerRun done → the first partition's activity started. */
  toFirstPartitionMs: number;
  /** Each later launch (a partition, or a group of small ones): the report that freed its slots → its work started. */
  handOversMs: number[];
  /** The last partition's signal → the whole-run check started. */
  toFinalCheckMs: number;
  finalCheckMs: number;
  /** The whole-run check done → the run workflow closed (finalize, cleanup, the workflow's end). */
  closingMs: number;
  /** The run workflow closed → `waitForResult` returned. */
  resultMs: number;
}

/** An activity's scheduled, started and closed times, by its type's name. */
function activities(events: HistoryEvent[]): { type: string; scheduled: number; started?: number; closed?: number }[] {
  const byId = new Map<number, { type: string; scheduled: number; started?: number; closed?: number }>();
  for (const e of events) {
    if (e.eventType === EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED)
      byId.set(Number(e.eventId), { type: e.activityTaskScheduledEventAttributes!.activityType!.name!, scheduled: at(e) });
    else if (e.eventType === EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED)
      byId.get(Number(e.activityTaskStartedEventAttributes!.scheduledEventId))!.started = at(e);
    else if (e.eventType === EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED)
      byId.get(Number(e.activityTaskCompletedEventAttributes!.scheduledEventId))!.closed = at(e);
  }
  return [...byId.values()];
}

/** `calledAt` and `returnedAt`: when the bench called `start` and when the result came back (ms since the epoch). */
export async function runHops(client: Client, workflowId: string, firstRunId: string, calledAt: number, returnedAt: number): Promise<RunHops> {
  const run = await historyEvents(client, workflowId, firstRunId);
  const started = at(run[0]);
  const acts = activities(run);
  const one = (type: string) => {
    const found = acts.find((a) => a.type === type);
    if (!found?.started || !found.closed) throw new Error(`run ${workflowId}: no finished ${type} activity in its history`);
    return found as Required<typeof found>;
  };
  const registration = one('registerRun');
  // the whole-run check: its lanes (executions since 'final-check-lanes'), then checkFinal's sums
  const sums = one('checkFinal');
  const lanes = acts.filter((a) => a.type === 'checkFinalLane');
  // from the moment the run asked for the lanes: a started event is written when its attempt ends
  const finalCheck = { started: Math.min(sums.started, ...lanes.map((a) => a.scheduled)), closed: sums.closed };
  const signals = reportSignals(run);
  // each partition workflow: when it started (the run's local activity started it), and when its activity started
  const children = await Promise.all(
    (await partitionWorkflowIds(client, workflowId, run)).map(async (id) => {
      const p = partitionTimes(await historyEvents(client, id));
      return { initiated: p.started, activityStarted: p.activityStarted };
    }),
  );
  // the first wave starts when registration returns; every later partition takes a freed slot
  const firstWave = children.filter((c) => !signals.some((s) => at(s) <= c.initiated));
  const handOversMs = children
    .filter((c) => !firstWave.includes(c))
    .map((c) => {
      const freedBy = signals.filter((s) => at(s) <= c.initiated).pop()!;
      return c.activityStarted - at(freedBy);
    });
  const closed = at(run[run.length - 1]);
  return {
    clientMs: started - calledAt,
    toRegistrationMs: registration.started - started,
    registrationMs: registration.closed - registration.started,
    toFirstPartitionMs: Math.min(...firstWave.map((c) => c.activityStarted)) - registration.closed,
    handOversMs,
    toFinalCheckMs: finalCheck.started - at(signals[signals.length - 1]),
    finalCheckMs: finalCheck.closed - finalCheck.started,
    closingMs: closed - finalCheck.closed,
    resultMs: returnedAt - closed,
  };
}

/** The hops as table rows (`| what | ms |`). */
export function hopRows(h: RunHops): string[] {
  const handOver = h.handOversMs.length > 0 ? Math.round(h.handOversMs.reduce((a, b) => a + b, 0) / h.handOversMs.length) : 0;
  return [
    ['`start` in the client, until the run workflow exists (the checks, the ledger reads)', h.clientMs],
    ['the run workflow → registration starts on a worker', h.toRegistrationMs],
    ['registration (the checks again, the scope count, the run’s rows)', h.registrationMs],
    ['registration → the first partition’s activity starts', h.toFirstPartitionMs],
    [`each later launch, a partition or a group of them: the report that freed its slots → its work starts (${h.handOversMs.length})`, handOver],
    ['the last partition’s signal → the whole-run check starts', h.toFinalCheckMs],
    ['the whole-run check', h.finalCheckMs],
    ['finalize, cleanup, the workflow’s end', h.closingMs],
    ['the workflow’s end → the client has the result', h.resultMs],
  ].map(([what, ms]) => `| ${what} | ${Math.round(ms as number)} |`);
}
