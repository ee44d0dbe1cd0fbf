/**
 * What a run that did not finish in time was waiting for, in lines for the chaos log: its
 * ledger (the partitions not succeeded), its workflow (pending activities, the last events) and
 * the partition workflows still running (their pending workflow task and activities). A flake
 * that happens only on a loaded CI machine is then diagnosed from the log it leaves.
 */
import type { Client, WorkflowExecutionDescription } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import type pg from 'pg';

const EventType = temporal.api.enums.v1.EventType;

export async function stuckRunReport(pool: pg.Pool, client: Client, runId: string, workflowId: string): Promise<string[]> {
  const lines: string[] = [];
  const tryTo = async (what: string, look: () => Promise<void>) => look().catch((err: Error) => void lines.push(`${what}: could not look (${err.message})`));
  await tryTo('ledger', async () => {
    const { rows: run } = await pool.query<{ status: string; cancel_requested: boolean; paused: boolean }>(
      'SELECT status, cancel_requested, paused FROM backfill.runs WHERE run_id = $1',
      [runId],
    );
    lines.push(`ledger: run ${JSON.stringify(run[0] ?? null)}`);
    const { rows } = await pool.query<{ partition_id: string; status: string; attempts: number; chunks: number; updated_at: Date; last_error: string | null }>(
      `SELECT partition_id, status, attempts, chunks, updated_at, last_error FROM backfill.partitions
        WHERE run_id = $1 AND status <> 'succeeded' ORDER BY ordinal LIMIT 10`,
      [runId],
    );
    for (const p of rows)
      lines.push(
        `ledger: partition ${p.partition_id} ${p.status}, attempts ${p.attempts}, chunks ${p.chunks}, updated ${p.updated_at.toISOString()}${p.last_error ? `, last error ${p.last_error}` : ''}`,
      );
  });
  await tryTo('the run workflow', async () => {
    const handle = client.workflow.getHandle(workflowId);
    lines.push(`run workflow: ${describeLine(await handle.describe())}`);
    const history = await handle.fetchHistory();
    const last = (history.events ?? []).slice(-8).map((e) => `${e.eventId} ${EventType[e.eventType ?? 0]?.replace('EVENT_TYPE_', '')}`);
    lines.push(`run workflow: last events ${last.join(', ')}`);
  });
  await tryTo('partition workflows', async () => {
    let n = 0;
    for await (const wf of client.workflow.list({ query: `WorkflowId STARTS_WITH '${workflowId}/' AND ExecutionStatus = 'Running'` })) {
      if (++n > 5) break;
      lines.push(`partition workflow ${wf.workflowId}: ${describeLine(await client.workflow.getHandle(wf.workflowId, wf.runId).describe())}`);
    }
    if (n === 0) lines.push('partition workflows: none running');
  });
  return lines;
}

function describeLine(d: WorkflowExecutionDescription): string {
  const raw = d.raw;
  const task = raw.pendingWorkflowTask;
  const parts = [`${d.status.name}, ${d.historyLength} events`];
  if (task) parts.push(`pending workflow task ${temporal.api.enums.v1.PendingWorkflowTaskState[task.state ?? 0]} attempt ${task.attempt}`);
  for (const a of raw.pendingActivities ?? []) {
    parts.push(
      `pending ${a.activityType?.name} ${temporal.api.enums.v1.PendingActivityState[a.state ?? 0]} attempt ${a.attempt}${a.lastFailure?.message ? ` (last failure: ${a.lastFailure.message})` : ''}${a.lastWorkerIdentity ? ` on ${a.lastWorkerIdentity}` : ''}`,
    );
  }
  return parts.join('; ');
}
