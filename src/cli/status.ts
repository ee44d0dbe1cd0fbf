/**
 * `backfill status`: a run's state from the ledger alone, so it works after Temporal's
 * retention has dropped the history: partitions by status, rows, failures with their key
 * ranges, and the last control events.
 */
import Table from 'cli-table3';
import type pg from 'pg';
import { listEvents, type RunEventRow } from '../ledger/events';
import { listPartitions, runTotals, type RunTotals } from '../ledger/partitions';
import type { RunRow } from '../ledger/runs';
import { ACTIVE_RUN_STATUSES } from '../shared/statuses';
import type { Limits } from '../shared/types';
import { describeWindow, msUntilOpen } from '../shared/window';

export interface StatusReport {
  limits: Limits;
  /** Set while the run is outside its allowed hours: when they open. */
  windowOpensAt: string | null;
  runId: string;
  name: string;
  workflowId: string;
  status: string;
  paused: boolean;
  reason: string;
  startedBy: string;
  transform: string;
  specHash: string;
  createdAt: string;
  finishedAt: string | null;
  lastError: string | null;
  totals: RunTotals;
  failures: { partitionId: string; status: string; error: string | null; range: string | null; attempts: number }[];
  /** Running partitions that are not writing right now, and why (guard, window, pause). */
  holding: { partitionId: string; reason: string }[];
  events: { at: string; kind: string; actor: string | null; reason: string | null }[];
}

export async function statusReport(pool: pg.Pool, run: RunRow): Promise<StatusReport> {
  const [totals, failures, events, running] = await Promise.all([
    runTotals(pool, run.run_id),
    listPartitions(pool, run.run_id, { status: ['failed'], limit: 20 }),
    listEvents(pool, run.run_id, 10),
    listPartitions(pool, run.run_id, { status: ['running'], limit: 100 }),
  ]);
  const closedFor = run.limits.window && ACTIVE_RUN_STATUSES.includes(run.status) ? msUntilOpen(run.limits.window, new Date()) : 0;
  return {
    limits: run.limits,
    windowOpensAt: closedFor > 0 ? new Date(Date.now() + closedFor).toISOString() : null,
    runId: run.run_id,
    name: run.name,
    workflowId: run.workflow_id,
    status: run.status,
    paused: run.paused,
    reason: run.reason,
    startedBy: run.started_by,
    transform: `${run.transform_name}@${run.transform_version} (${run.transform_kind}, code ${run.transform_hash.slice(0, 12)})`,
    specHash: run.spec_hash,
    createdAt: run.created_at.toISOString(),
    finishedAt: run.finished_at?.toISOString() ?? null,
    lastError: run.last_error,
    totals,
    holding: running.filter((p) => p.hold_reason).map((p) => ({ partitionId: p.partition_id, reason: p.hold_reason! })),
    failures: failures.map((p) => ({ partitionId: p.partition_id, status: p.status, error: p.last_error, range: p.error_range, attempts: p.attempts })),
    events: events.map((e: RunEventRow) => ({ at: e.at.toISOString(), kind: e.kind, actor: e.actor, reason: e.reason })),
  };
}

export function renderStatus(r: StatusReport): string {
  const lines = [
    `Run ${r.name}/${r.runId}: ${r.status.toUpperCase()}${r.paused && r.status === 'paused' ? ' (paused by an operator)' : ''}`,
    `  reason:    ${r.reason}`,
    `  started:   ${r.createdAt} by ${r.startedBy}${r.finishedAt ? `, finished ${r.finishedAt}` : ''}`,
    `  transform: ${r.transform}`,
    `  workflow:  ${r.workflowId}`,
  ];
  lines.push(`  limits:    ${describeLimits(r.limits)}`);
  if (r.windowOpensAt) lines.push(`  holding:   outside the allowed hours (${describeWindow(r.limits.window!)}); continues by itself at ${r.windowOpensAt}`);
  if (r.lastError) lines.push(`  error:     ${r.lastError}`);
  const t = r.totals;
  const table = new Table({ style: plainStyle(), head: ['partitions', 'pending', 'running', 'succeeded', 'failed', 'cancelled', 'rows read', 'written', 'unchanged'] });
  table.push([t.total, t.byStatus.pending, t.byStatus.running, t.byStatus.succeeded, t.byStatus.failed, t.byStatus.cancelled, t.rowsRead, t.rowsWritten, t.rowsUnchanged]);
  lines.push(table.toString());
  if (r.holding.length > 0) {
    lines.push('Holding:');
    for (const h of r.holding) lines.push(`  ${h.partitionId}: ${h.reason}`);
  }
  if (r.failures.length > 0) {
    lines.push('Failed partitions:');
    for (const f of r.failures) lines.push(`  ${f.partitionId} (${f.attempts} attempt${f.attempts === 1 ? '' : 's'}): ${f.error ?? 'no message'}`);
  }
  if (r.events.length > 0) {
    lines.push('Recent events:');
    for (const e of r.events) lines.push(`  ${e.at}  ${e.kind.padEnd(16)} ${e.actor ?? ''}${e.reason ? ` — ${e.reason}` : ''}`);
  }
  return lines.join('\n');
}

/** No ANSI colours when the output is not a terminal (logs, CI, pipes). */
export function plainStyle(): { head: string[]; border: string[] } | undefined {
  return process.stdout.isTTY ? undefined : { head: [], border: [] };
}

export function describeLimits(l: Limits): string {
  return [
    `concurrency ${l.concurrency}`,
    `chunk size ${l.chunkSize}`,
    l.rowsPerSecond ? `${l.rowsPerSecond} rows/s` : 'no rows/s cap',
    l.window ? `allowed ${describeWindow(l.window)}` : 'all hours',
  ].join(', ');
}
