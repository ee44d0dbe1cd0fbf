/**
 * The backfill's own metrics, through the SDK's meter, so they come out of the worker's
 * one Prometheus endpoint beside the SDK's: rows read / written / unchanged, chunks, chunk
 * duration, and whether a partition waits for its paused run. Tagged by backfill and run.
 */
import type { Context } from '@temporalio/activity';
import type { ChunkOutcome } from './chunk';

export function chunkMetrics(activity: Context, run: { name: string; run_id: string }) {
  const meter = activity.metricMeter.withTags({ backfill: run.name, run_id: run.run_id });
  const read = meter.createCounter('backfill_rows_read', 'rows', 'source rows read by committed chunks');
  const written = meter.createCounter('backfill_rows_written', 'rows', 'target rows inserted, updated or deleted by committed chunks');
  const unchanged = meter.createCounter('backfill_rows_unchanged', 'rows', 'output rows that already equalled the target');
  const chunks = meter.createCounter('backfill_chunks', 'chunks', 'committed chunks');
  const duration = meter.createHistogram('backfill_chunk_duration', 'int', 'ms', 'time from chunk start to commit');
  const paused = meter.createGauge('backfill_partition_paused', 'int', '1', '1 while this partition waits because its run is paused');
  return {
    paused(isPaused: boolean) {
      paused.set(isPaused ? 1 : 0);
    },
    committed(outcome: ChunkOutcome, ms: number) {
      if (outcome.rowsRead === 0 && outcome.rowsWritten === 0) return;
      read.add(outcome.rowsRead);
      written.add(outcome.rowsWritten);
      unchanged.add(outcome.rowsUnchanged);
      chunks.add(1);
      duration.record(ms);
    },
  };
}
