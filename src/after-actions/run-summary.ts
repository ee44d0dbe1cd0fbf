/**
 * The run summary that after-actions send (notify, webhook) and the report starts from:
 * what ran, on what, why, with what result. Counts and names only, never row values.
 */
import type pg from 'pg';
import { gateResults } from '../ledger/gates';
import { runTotals } from '../ledger/partitions';
import type { RunRow } from '../ledger/runs';

export interface RunSummary {
  runId: string;
  name: string;
  reason: string;
  status: string;
  target: string;
  transform: { name: string; version: number; kind: string; hash: string };
  partitions: Record<string, number>;
  rows: { read: number; written: number; unchanged: number; skipped: number };
  gates: { stage: string; gate: string; passed: boolean; violations: number }[];
  consumers: string[];
  changesSemantics: boolean;
  startedBy: string;
  startedAt: string | null;
  finishedAt: string | null;
}

export async function runSummary(pool: pg.Pool | pg.PoolClient, run: RunRow): Promise<RunSummary> {
  const totals = await runTotals(pool, run.run_id);
  const gates = (await gateResults(pool, run.run_id)).filter((g) => g.partition_id === null && g.attempt === run.attempt);
  return {
    runId: run.run_id,
    name: run.name,
    reason: run.reason,
    status: run.status,
    target: run.target_relation ?? run.spec.target.table,
    transform: { name: run.transform_name, version: run.transform_version, kind: run.transform_kind, hash: run.transform_hash },
    partitions: { total: totals.total, ...totals.byStatus },
    rows: { read: totals.rowsRead, written: totals.rowsWritten, unchanged: totals.rowsUnchanged, skipped: totals.rowsSkipped ?? 0 },
    gates: gates.map((g) => ({ stage: g.stage, gate: g.gate, passed: g.passed, violations: Number(g.violations) })),
    consumers: run.spec.downstream?.consumers ?? [],
    changesSemantics: run.spec.downstream?.changesSemantics === true,
    startedBy: run.started_by,
    startedAt: run.started_at?.toISOString() ?? null,
    finishedAt: run.finished_at?.toISOString() ?? null,
  };
}
