/**
 * Everything a run report shows, read from the ledger alone (it works after Temporal's
 * retention dropped the history): the run and its frozen transform, partitions, the chunk
 * log, gates, after-actions and the audit trail. Counts and names only: gate examples (row
 * keys and values) stay in the ledger, because a report is attached to tickets.
 */
import type pg from 'pg';
import { listAfterActions, type AfterActionRow } from '../ledger/after-actions';
import { runSummary, type RunSummary } from '../after-actions/run-summary';
import { gateResults } from '../ledger/gates';
import { chunkTimeline } from '../ledger/chunks';
import { allEvents } from '../ledger/events';
import { partitionCounters } from '../ledger/partition-reads';
import type { RunRow } from '../ledger/runs';
import type { Capture } from '../gates/distributions';
import { loadCaptures } from '../ledger/distributions';
import { listNotifications } from '../ledger/notifications';

export interface ReportPartition {
  id: string;
  status: string;
  rowsRead: number;
  rowsWritten: number;
  rowsUnchanged: number;
  rowsSkipped: number;
  chunks: number;
  attempts: number;
}

export interface ReportChunk {
  partitionId: string;
  /** Milliseconds since the run's first chunk committed. */
  atMs: number;
  rowsRead: number;
  rowsWritten: number;
  durationMs: number;
  waitMs: number;
  chunkSize: number;
  governedBy: string;
}

export interface ReportGate {
  attempt: number;
  stage: string;
  gate: string;
  partitionId: string | null;
  passed: boolean;
  rowsChecked: number;
  violations: number;
}

export interface ReportData {
  generatedAt: string;
  summary: RunSummary;
  spec: RunRow['spec'];
  specHash: string;
  specFile: string | null;
  transformSql: string | null;
  modulePath: string | null;
  partitions: ReportPartition[];
  chunks: ReportChunk[];
  /** When the first chunk committed (chunks' atMs count from here). */
  chunksFrom: string | null;
  gates: ReportGate[];
  downstream: string | null;
  actions: AfterActionRow[];
  events: { at: string; kind: string; actor: string | null; reason: string | null }[];
  /** The Backfill version and commit that registered the run (runs from before it was recorded: null). */
  engineVersion: string | null;
  /** The role the registering worker connected as (runs registered before it was recorded: null). */
  databaseRole: { role: string; superuser: boolean; bypassRls: boolean } | null;
  /** Declared distributions: the capture before the run wrote and the newest after it, per column. */
  distributions: { column: string; before?: Capture; after?: Capture }[];
  /** A run of part of the plan on purpose; null for the whole plan. */
  subset: RunRow['subset'];
  /** Who was told what (the spec's `notify:`), and how delivering it went. */
  notifications: { moment: string; target: string; status: string; attempts: number; deliveredAt: string | null; error: string | null }[];
}

/** At most this many chunks are drawn; a larger log is thinned evenly (the totals use every chunk). */
const MAX_CHUNKS = 5000;

export async function collectReport(pool: pg.Pool, run: RunRow): Promise<ReportData> {
  const partitions = await partitionCounters(pool, run.run_id);
  const chunks = await chunkTimeline(pool, run.run_id, MAX_CHUNKS);
  const events = await allEvents(pool, run.run_id);
  return {
    generatedAt: new Date().toISOString(),
    summary: await runSummary(pool, run),
    spec: run.spec,
    subset: run.subset ?? null,
    notifications: (await listNotifications(pool, run.run_id)).map((n) => ({
      moment: n.event_key,
      target: n.target,
      status: n.status,
      attempts: n.attempts,
      deliveredAt: n.delivered_at?.toISOString() ?? null,
      error: n.last_error,
    })),
    specHash: run.spec_hash,
    specFile: run.spec_file,
    engineVersion: run.engine_version,
    transformSql: run.spec.transform.sql ?? null,
    modulePath: run.module_path,
    partitions: partitions.map((p) => ({
      id: p.partition_id,
      status: p.status,
      rowsRead: Number(p.rows_read),
      rowsWritten: Number(p.rows_written),
      rowsUnchanged: Number(p.rows_unchanged),
      rowsSkipped: Number(p.rows_skipped),
      chunks: p.chunks,
      attempts: p.attempts,
    })),
    chunks: chunks.map((c) => ({
      partitionId: c.partition_id,
      atMs: Number(c.at_ms),
      rowsRead: Number(c.rows_read),
      rowsWritten: Number(c.rows_written),
      durationMs: c.duration_ms,
      waitMs: c.wait_ms,
      chunkSize: c.chunk_size,
      governedBy: c.governed_by,
    })),
    chunksFrom: chunks[0]?.first?.toISOString() ?? null,
    gates: (await gateResults(pool, run.run_id))
      .filter((g) => g.partition_id === null || !g.passed)
      .map((g) => ({
        attempt: g.attempt,
        stage: g.stage,
        gate: g.gate,
        partitionId: g.partition_id,
        passed: g.passed,
        rowsChecked: Number(g.rows_checked),
        violations: Number(g.violations),
      })),
    downstream: run.downstream,
    actions: await listAfterActions(pool, run.run_id),
    events: events.map((e) => ({ at: e.at.toISOString(), kind: e.kind, actor: e.actor, reason: e.reason })),
    databaseRole: (events.find((e) => e.kind === 'registered')?.detail as { role?: ReportData['databaseRole'] } | null)?.role ?? null,
    distributions: byColumn(await loadCaptures(pool, run.run_id)),
  };
}

function byColumn(captures: (Capture & { stage: 'before' | 'after'; attempt: number })[]): ReportData['distributions'] {
  const columns = [...new Set(captures.map((c) => c.column))];
  return columns.map((column) => {
    const mine = captures.filter((c) => c.column === column);
    return { column, before: mine.find((c) => c.stage === 'before'), after: mine.filter((c) => c.stage === 'after').sort((a, b) => b.attempt - a.attempt)[0] };
  });
}
