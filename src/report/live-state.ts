/**
 * What the live partition grid shows (`report <run> --serve`), read from the ledger on every
 * look: the run's line (status, rows, rate, ETA), every partition in plan order with its state —
 * pending, running, held (running, but not writing: a guard, the window, a pause), succeeded,
 * failed, cancelled, reverted — its rows, and for a failure its message and the key range it
 * stopped at; and the run's pace and guard readings over the last minutes. No row values: bounds
 * are described as `partitions` describes them.
 */
import type pg from 'pg';
import { boundsText } from '../compiler/partition-predicate';
import { partitionWorkflowId, runWorkflowId } from '../domain/ids';
import { chunkSeries, type SeriesPoint } from '../ledger/chunk-series';
import { getRun, type RunRow } from '../ledger/runs';
import { listPartitions } from '../ledger/partitions';
import { statusReport } from '../operations/status';

export type CellState = 'pending' | 'running' | 'held' | 'succeeded' | 'failed' | 'cancelled' | 'reverted';

export interface LiveCell {
  id: string;
  state: CellState;
  bounds: string;
  rowsRead: number;
  rowsWritten: number;
  /** Why it is held, or why it failed, and the key range a failure stopped at. */
  note: string | null;
  errorRange: string | null;
  /** Its partition workflow in the Temporal Web UI. */
  workflowUrl: string;
}

export interface LiveState {
  runId: string;
  name: string;
  status: string;
  paused: boolean;
  rowsRead: number;
  rowsWritten: number;
  rowsPerSecond: number | null;
  etaSeconds: number | null;
  counts: Record<CellState, number>;
  cells: LiveCell[];
  series: SeriesPoint[];
  runUrl: string;
  at: string;
}

/** Partitions drawn at most (a larger plan shows its first ones and says how many more). */
export const MAX_CELLS = 20_000;
const SERIES_BUCKET_SECONDS = 10;
const SERIES_BUCKETS = 60;

export async function liveState(pool: pg.Pool, runId: string, webUi: (workflowId: string) => string): Promise<LiveState> {
  const run = (await getRun(pool, runId)) as RunRow;
  const [report, partitions, series] = await Promise.all([
    statusReport(pool, run),
    listPartitions(pool, runId, { limit: MAX_CELLS }),
    chunkSeries(pool, runId, SERIES_BUCKET_SECONDS, SERIES_BUCKETS),
  ]);
  const counts: Record<CellState, number> = { pending: 0, running: 0, held: 0, succeeded: 0, failed: 0, cancelled: 0, reverted: 0 };
  const cells = partitions
    .sort((a, b) => a.ordinal - b.ordinal)
    .map((p): LiveCell => {
      const state: CellState = p.reverted_by ? 'reverted' : p.status === 'running' && p.hold_reason ? 'held' : p.status;
      counts[state]++;
      return {
        id: p.partition_id,
        state,
        bounds: boundsText(p.bounds),
        rowsRead: Number(p.rows_read),
        rowsWritten: Number(p.rows_written),
        note: state === 'held' ? p.hold_reason : state === 'reverted' ? `reverted by ${p.reverted_by}` : p.last_error,
        errorRange: p.error_range,
        // its group's, where it ran with other small partitions; attempts before the column had their own
        workflowUrl: webUi(p.workflow_id ?? partitionWorkflowId(run.name, runId, p.partition_id)),
      };
    });
  return {
    runId,
    name: run.name,
    status: report.status,
    paused: report.paused,
    rowsRead: report.totals.rowsRead,
    rowsWritten: report.totals.rowsWritten,
    rowsPerSecond: report.eta?.rowsPerSecond ?? null,
    etaSeconds: report.eta?.seconds ?? null,
    counts,
    cells,
    series,
    runUrl: webUi(runWorkflowId(run.name, runId)),
    at: new Date().toISOString(),
  };
}
