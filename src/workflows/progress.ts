/**
 * Renders a run's progress as the Markdown table shown in the Web UI's Current Details.
 */
import type { RunProgress } from '../shared/types';

export function renderProgressMarkdown(p: RunProgress): string {
  const state = p.cancelRequested ? 'cancelling' : p.paused ? 'paused by an operator' : p.status;
  const eta = p.etaSeconds === null ? '—' : `${Math.round(p.etaSeconds / 60)} min`;
  return [
    `### Backfill ${p.name} / ${p.runId}: ${state}`,
    '',
    '| partitions | total | pending | running | succeeded | failed | cancelled |',
    '|---|---|---|---|---|---|---|',
    `| | ${p.partitions.total} | ${p.partitions.pending} | ${p.partitions.running} | ${p.partitions.succeeded} | ${p.partitions.failed} | ${p.partitions.cancelled} |`,
    '',
    '| rows (finished partitions) | read | written | unchanged |',
    '|---|---|---|---|',
    `| | ${p.finished.rowsRead} | ${p.finished.rowsWritten} | ${p.finished.rowsUnchanged} |`,
    '',
    `Concurrency ${p.limits.concurrency}, chunk size ${p.limits.chunkSize}${p.limits.rowsPerSecond ? `, ${p.limits.rowsPerSecond} rows/s` : ''}. ETA ${eta}.`,
  ].join('\n');
}
