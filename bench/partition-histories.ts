/**
 * A run's partition workflows, found from the run's own history. Partitions are workflows of
 * their own, started by the run's local activity (src/activities/start-partition.ts), so the
 * run's history has no child events to follow. Every partition reports by a signal
 * (`partitionFinished`, or a group's `partitionsFinished`), and its workflow id, or its group's,
 * is the run's followed by a slash (src/domain/ids.ts): they are found by that prefix in the
 * workflow list. Runs recorded while partitions were children name them in their
 * child-initiated events instead; both are read.
 */
import type { Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';

const EventType = temporal.api.enums.v1.EventType;
export type HistoryEvent = temporal.api.history.v1.IHistoryEvent;

export const at = (e: HistoryEvent) => Number(e.eventTime!.seconds) * 1000 + (e.eventTime!.nanos ?? 0) / 1e6;

export async function historyEvents(client: Client, workflowId: string, runId?: string): Promise<HistoryEvent[]> {
  return (await client.workflow.getHandle(workflowId, runId).fetchHistory()).events ?? [];
}

const REPORTS = ['partitionFinished', 'partitionsFinished'];

/** The run's report signals (a partition's, a group's), in order. */
export function reportSignals(events: HistoryEvent[]): HistoryEvent[] {
  return events.filter(
    (e) => e.eventType === EventType.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED && REPORTS.includes(e.workflowExecutionSignaledEventAttributes?.signalName ?? ''),
  );
}

/** The workflow ids of the partitions (and groups) this history of the run reported or started as children. */
export async function partitionWorkflowIds(client: Client, runWorkflowId: string, events: HistoryEvent[]): Promise<string[]> {
  const ids = new Set<string>();
  for (const e of events) {
    const child = e.startChildWorkflowExecutionInitiatedEventAttributes?.workflowId;
    if (e.eventType === EventType.EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED && child) ids.add(child);
  }
  // partitions and groups of partitions are workflows of their own under the run's id
  if (reportSignals(events).length > 0)
    for await (const w of client.workflow.list({ query: `WorkflowId STARTS_WITH "${runWorkflowId}/"` })) ids.add(w.workflowId);
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
