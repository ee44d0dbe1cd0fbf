/**
 * Starting the run workflow, for a first attempt (start) and for a retry alike: one place
 * that sets its id, search attributes, memo and Web UI texts, and one place that waits for
 * its result.
 */
import type { Client, WorkflowHandle, WorkflowHandleWithFirstExecutionRunId } from '@temporalio/client';
import { runWorkflowId } from '../shared/ids';
import type { RunStatus } from '../shared/statuses';
import type { RunResult, RunWorkflowInput } from '../workflows/backfill-run';
import { BackfillName, BackfillRunId, BackfillStatus } from '../workflows/search-attributes';

export interface RunWorkflowDisplay {
  /** The status the Web UI lists before the workflow publishes its own. */
  status: RunStatus;
  /** One line in the Web UI's list; cut to 200 bytes. */
  summary: string;
  /** Markdown for the Web UI's User Metadata. */
  details?: string;
}

export function startRunWorkflow(
  client: Client,
  taskQueue: string,
  input: RunWorkflowInput,
  display: RunWorkflowDisplay,
): Promise<WorkflowHandleWithFirstExecutionRunId> {
  return client.workflow.start('backfillRunWorkflow', {
    workflowId: runWorkflowId(input.spec.name, input.runId),
    taskQueue,
    args: [input],
    typedSearchAttributes: [
      { key: BackfillName, value: input.spec.name },
      { key: BackfillRunId, value: input.runId },
      { key: BackfillStatus, value: display.status },
    ],
    // the variable name only, never the URL: lets tools find the run's ledger
    memo: { database: input.spec.database },
    staticSummary: oneLine(display.summary),
    ...(display.details ? { staticDetails: display.details } : {}),
  });
}

export async function waitForResult(handle: WorkflowHandle): Promise<RunResult> {
  return (await handle.result()) as RunResult;
}

function oneLine(text: string): string {
  const flat = text.replace(/\s+/g, ' ');
  return Buffer.byteLength(flat) <= 200
    ? flat
    : `${Buffer.from(flat)
        .subarray(0, 196)
        .toString()
        .replace(/\uFFFD+$/, '')}…`;
}
