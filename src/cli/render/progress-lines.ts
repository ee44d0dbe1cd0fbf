/**
 * A run followed as JSON lines (`watch -o jsonl`, `start --wait -o jsonl`): one compact object
 * on stdout whenever what it says changes, for a script or a log shipper to read as it comes.
 * Row values stay out (no cursors): where a partition stands is in the ledger (backfill status).
 */
import type pg from 'pg';
import { followRun, type RunSnapshot } from '../../operations/follow';
import type { RunStatus } from '../../domain/statuses';

interface ProgressUpdate {
  type: 'progress';
  at: string;
  runId: string;
  status: RunStatus;
  paused: boolean;
  cancelRequested: boolean;
  /** Why a gate (the canary, a ramp stage) holds the run, while it does. */
  heldBy: string | null;
  partitions: { total: number; done: number; pending: number; running: number; succeeded: number; failed: number; cancelled: number };
  rows: { planned: number | null; read: number; written: number; unchanged: number; skipped: number };
  rowsPerSecond: number;
  running: { partitionId: string; rowsRead: number; holding: string | null }[];
  failed: { partitionId: string; error: string | null }[];
}

function progressUpdate(s: RunSnapshot, at = new Date()): ProgressUpdate {
  return {
    type: 'progress',
    at: at.toISOString(),
    runId: s.run.run_id,
    status: s.run.status,
    paused: s.run.paused,
    cancelRequested: s.run.cancel_requested,
    heldBy: s.canaryHold ?? null,
    partitions: { total: s.totals.total, done: s.done, ...s.totals.byStatus },
    rows: {
      planned: s.run.rows_planned === null || s.run.rows_planned === undefined ? null : Number(s.run.rows_planned),
      read: s.totals.rowsRead,
      written: s.totals.rowsWritten,
      unchanged: s.totals.rowsUnchanged,
      skipped: s.totals.rowsSkipped ?? 0,
    },
    rowsPerSecond: s.rowsPerSecond,
    running: s.running.map((p) => ({ partitionId: p.partition_id, rowsRead: Number(p.rows_read), holding: p.hold_reason })),
    failed: s.failed.map((p) => ({ partitionId: p.partition_id, error: p.last_error })),
  };
}

/** Streams updates to `out` until the run ends; resolves with its final ledger status. */
export async function streamProgress(pool: pg.Pool, runId: string, options: { out?: NodeJS.WritableStream; intervalMs?: number } = {}): Promise<RunStatus> {
  const out = options.out ?? process.stdout;
  let previous = '';
  return followRun(
    pool,
    runId,
    (s) => {
      const update = progressUpdate(s);
      // a new line only when something but the time changed: a paused run is one line, not one a second
      const said = JSON.stringify({ ...update, at: undefined });
      if (said === previous) return;
      previous = said;
      out.write(`${JSON.stringify(update)}\n`);
    },
    {
      intervalMs: options.intervalMs,
      runningLimit: 100,
      // stdout carries only the stream; the outage notice goes where a person reads it
      onOutage: (message) => message && process.stderr.write(`${message}\n`),
    },
  );
}
