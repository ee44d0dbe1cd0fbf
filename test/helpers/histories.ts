/**
 * Every event of every run of the given workflows as one searchable text: each string of
 * the history as it is stored, and again base64-decoded (payload data, metadata and
 * encoded attributes are bytes, which the history's JSON carries as base64). Lists runs
 * through the raw API, so a client without the payload key can read what is stored.
 */
import type { Client } from '@temporalio/client';
import type { temporal } from '@temporalio/proto';

export async function historiesText(client: Client, workflowIds: string[]): Promise<string> {
  const texts: string[] = [];
  for (const workflowId of workflowIds) {
    texts.push(workflowId);
    const { executions } = await client.workflowService.listWorkflowExecutions({ namespace: client.options.namespace, query: `WorkflowId = '${workflowId}'` });
    if (executions.length === 0) throw new Error(`no workflow ${workflowId} is visible yet`);
    for (const wf of executions) {
      const history = await client.workflow.getHandle(wf.execution!.workflowId!, wf.execution!.runId!).fetchHistory();
      collectStrings(JSON.parse(JSON.stringify(history)), texts);
    }
  }
  return texts.join('\n');
}

function collectStrings(value: unknown, out: string[]): void {
  if (typeof value === 'string') {
    out.push(value);
    if (/^[A-Za-z0-9+/]+={0,2}$/.test(value) && value.length % 4 === 0) out.push(Buffer.from(value, 'base64').toString('utf8'));
  } else if (Array.isArray(value)) {
    for (const v of value) collectStrings(v, out);
  } else if (value && typeof value === 'object') {
    for (const v of Object.values(value)) collectStrings(v, out);
  }
}

/** What each of a run's partition starts returned (its local activity's marker in the run's history), in order. */
export function partitionStarts(history: temporal.api.history.v1.IHistory): { partitionRunId?: string; eagerlyStarted?: boolean }[] {
  return (history.events ?? [])
    .filter((e) => e.markerRecordedEventAttributes?.markerName === 'core_local_activity')
    .map((m) => JSON.parse(Buffer.from(m.markerRecordedEventAttributes!.details!.result!.payloads![0].data!).toString()));
}

/** The attempts of a workflow's local activities of one type, as their markers record them (one marker per finished attempt). */
export function localAttemptsOf(history: temporal.api.history.v1.IHistory, activityType: string): number[] {
  return (history.events ?? [])
    .filter((e) => e.markerRecordedEventAttributes?.markerName === 'core_local_activity')
    .map(
      (m) =>
        JSON.parse(Buffer.from(m.markerRecordedEventAttributes!.details!.data!.payloads![0].data!).toString()) as { activity_type: string; attempt: number },
    )
    .filter((d) => d.activity_type === activityType)
    .map((d) => d.attempt);
}
