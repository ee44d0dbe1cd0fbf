/** A run's partitions as a table (`backfill partitions`), failures with their error below the table. */
import Table from 'cli-table3';
import type { PartitionListing } from '../../operations/partitions';
import { plainStyle } from './status';

export function renderPartitions(list: PartitionListing[]): string {
  if (list.length === 0) return 'No partitions match.';
  const table = new Table({ style: plainStyle(), head: ['partition', 'status', 'rows read', 'written', 'unchanged', 'chunks', 'attempts', 'bounds'] });
  for (const p of list) {
    table.push([p.partitionId, p.holding ? `${p.status} (held)` : p.status, p.rowsRead, p.rowsWritten, p.rowsUnchanged, p.chunks, p.attempts, p.bounds]);
  }
  const notes = list.flatMap((p) => [
    ...(p.error ? [`${p.partitionId} ${p.status}: ${p.error}${p.errorRange ? ` (at ${p.errorRange})` : ''}`] : []),
    ...(p.holding ? [`${p.partitionId} held: ${p.holding}`] : []),
  ]);
  return [table.toString(), ...(notes.length > 0 ? ['', ...notes] : [])].join('\n');
}
