/**
 * A run's partition workflows, found from the run's own history. Partitions are workflows of
 * their own, started by the run's local activity (src/activities/start-partition.ts), so the
 * run's history has no child events to follow: every partition reports by a `partitionFinished`
 * signal carrying its id, and its workflow id is the run's with the partition id after a slash
 * (src/domain/ids.ts, partitionWorkflowId). Runs recorded while partitions were children name
 * them in their child-initiated events instead; both are read.
 */
import type { Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';

const EventType = temporal.api.enums.v1.EventType;
export type HistoryEvent = temporal.api.history.v1.IHistoryEvent;

export const at = (e: HistoryEvent) => Number(e.eventTime!.seconds) * 1000 + (e.eventTime!.nanos ?? 0) / 1e6;

export async function historyEvents(client: Client, workflowId: string, runId?: string): Promise<HistoryEvent[]> {
  return (await client.workflow.getHandle(workflowId, runId).fetchHistory()).events ?? [];
}

/** The run's `partitionFinished` signals, in order. */
export function reportSignals(events: HistoryEvent[]): HistoryEvent[] {
  return events.filter(
    (e) => e.eventType === EventType.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED && e.workflowExecutionSignaledEventAttributes?.signalName === 'partitionFinished',
  );
}

/** The workflow ids of the partitions this history of the run reported or started as children. */
export function partitionWorkflowIds(runWorkflowId: string, events: HistoryEvent[]): string[] {
  const ids = new Set<string>();
  for (const e of events) {
    const child = e.startChildWorkflowExecutionInitiatedEventAttributes?.workflowId;
    if (e.eventType === EventType.EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED && child) ids.add(child);
  }
  for (const s of reportSignals(events)) {
    const payload = s.workflowExecutionSignaledEventAttributes!.input!.payloads![0];
    const report = JSON.parse(Buffer.from(payload.data!).toString()) as { partitionId: string };
    ids.add(`${runWorkflowId}/${report.partitionId}`);
  }
  return [...ids];
}

/**
 * A partition workflow's start, and when its work started: its first workflow task, where its
 * local attempt runs (src/workflows/backfill-partition.ts), or, in executions recorded before
 * that, its activity (NaN when it never started one).
 */
export function partitionTimes(events: HistoryEvent[]): { started: number; activityStarted: number } {
  const local = events.some((e) => e.markerRecordedEventAttributes?.markerName === 'core_local_activity');
  const work = events.find((e) => e.eventType === (local ? EventType.EVENT_TYPE_WORKFLOW_TASK_STARTED : EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED));
  return { started: at(events[0]), activityStarted: work ? at(work) : NaN };
}
