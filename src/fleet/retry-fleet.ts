/**
 * `retry-failed` of a fleet: the next attempt of the fleet, under the same workflow id, in the
 * same waves. A member that succeeded is shown and not started again; a member whose run failed
 * or was cancelled is retried as a run is (only its failed and cancelled partitions, from their
 * checkpoints, as attempt N+1 in its own ledger); a member that never registered a run (refused,
 * or not started under onError: stop) starts its run now.
 */
import type { Client, WorkflowHandle } from '@temporalio/client';
import type { OperatorAction } from '../domain/types';
import { UsageError } from '../domain/usage-error';
import { createPool, databaseUrlFrom } from '../db/pool';
import type pg from 'pg';
import { listPartitions, runTotals } from '../ledger/partitions';
import { getRun, ledgerExists } from '../ledger/runs';
import { inParallel } from '../util/in-parallel';
import type { FleetMemberPlan, FleetWorkflowInput, MemberOutcome } from '../workflows/fleet/input';
import type { RunResult } from '../workflows/run/input';
import { fleetProgressQuery } from '../workflows/fleet/messages';
import { findFleet } from './fleet-status';

export interface FleetRetryStarted {
  fleetId: string;
  workflowId: string;
  attempt: number;
  /** What happens to each member in this attempt. */
  members: { variable: string; action: 'kept' | 'retried' | 'started'; partitions?: number }[];
  handle: WorkflowHandle;
}

export async function retryFleet(
  temporal: { client: Client; taskQueue: string },
  ref: string,
  who: OperatorAction,
  env: Record<string, string | undefined> = process.env,
): Promise<FleetRetryStarted> {
  const handle = await findFleet(temporal.client, ref);
  const described = await handle.describe();
  if (described.status.name === 'RUNNING')
    throw new UsageError(`fleet ${ref} is running; retry-failed applies to a finished fleet (wait for it, or cancel it first)`);
  const { input, state, attempt, record } = await handle.query(fleetProgressQuery);
  if (state.members.every((m) => m.status === 'succeeded')) throw new UsageError(`fleet ${ref} succeeded; there is nothing to retry`);
  const next = attempt + 1;
  const planned = await inParallel(state.members, 4, (m) => memberNext(input, m, who, env));
  const retried: FleetWorkflowInput = { ...input, attempt: next, members: planned.map((p) => p.plan) };
  const started = await temporal.client.workflow.start('backfillFleetWorkflow', {
    workflowId: record.workflowId,
    taskQueue: temporal.taskQueue,
    args: [retried],
    typedSearchAttributes: described.typedSearchAttributes,
    memo: described.memo,
    staticSummary: `fleet ${record.name}: retry ${next} — ${who.reason ?? record.reason}`.slice(0, 200),
  });
  return {
    fleetId: record.fleetId,
    workflowId: record.workflowId,
    attempt: next,
    members: planned.map((p) => ({ variable: p.plan.variable, action: p.action, ...(p.partitions !== undefined ? { partitions: p.partitions } : {}) })),
    handle: started,
  };
}

async function memberNext(
  input: FleetWorkflowInput,
  m: MemberOutcome,
  who: OperatorAction,
  env: Record<string, string | undefined>,
): Promise<{ plan: FleetMemberPlan; action: 'kept' | 'retried' | 'started'; partitions?: number }> {
  const { retry: _retry, succeeded: _succeeded, ...plan } = input.members.find((p) => p.variable === m.variable)!;
  if (m.status === 'succeeded' && m.result) return { plan: { ...plan, succeeded: m.result }, action: 'kept' };
  // the member's own ledger says whether its run registered, and what is left to do
  const pool = createPool(databaseUrlFrom(m.variable, env), { max: 1, applicationName: 'backfill-cli' });
  try {
    const run = (await ledgerExists(pool)) ? await getRun(pool, m.runId) : undefined;
    if (!run) return { plan, action: 'started' };
    // succeeded by its ledger (the fleet saw no result): kept, shown with the ledger's counts
    if (run.status === 'succeeded') return { plan: { ...plan, succeeded: m.result ?? (await ledgerResult(pool, run.run_id)) }, action: 'kept' };
    const left = await listPartitions(pool, run.run_id, { status: ['failed', 'cancelled'], limit: 100_000 });
    return {
      plan: { ...plan, retry: { attempt: run.attempt + 1, actor: who.actor, ...(who.reason ? { reason: who.reason } : {}) } },
      action: 'retried',
      partitions: left.length,
    };
  } catch (err) {
    throw new UsageError(
      `${m.variable}: cannot read its ledger to retry it (${(err as Error).message}); retry-failed needs every unfinished member's variable set here`,
    );
  } finally {
    await pool.end();
  }
}

async function ledgerResult(pool: pg.Pool, runId: string): Promise<RunResult> {
  const t = await runTotals(pool, runId);
  return {
    runId,
    status: 'succeeded',
    partitions: { total: t.total, succeeded: t.byStatus.succeeded, failed: t.byStatus.failed, cancelled: t.byStatus.cancelled },
    rowsRead: t.rowsRead,
    rowsWritten: t.rowsWritten,
    rowsUnchanged: t.rowsUnchanged,
  };
}
