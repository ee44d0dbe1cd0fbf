/** Text for `backfill revert --dry-run`: per partition, what a revert would put back and what it would leave. */
import Table from 'cli-table3';
import { runLabel } from '../../domain/labels';
import type { RevertPreview } from '../../undo/revert-preview';
import { plainStyle } from './status';

/** Partitions listed one by one up to this many; the totals always. */
const LISTED = 50;

export function renderRevertPreview(p: RevertPreview): string {
  const t = p.totals;
  const table = new Table({ style: plainStyle(), head: ['partition', 'rows changed', 'would put back', 'already as before', 'changed since (left)', ''] });
  for (const x of p.partitions.slice(0, LISTED))
    table.push([x.id, x.images, x.restore, x.asBefore, x.conflicts, x.held ? 'held: replace mode restores a partition whole or not at all' : '']);
  return [
    `Revert of ${runLabel(p.name, p.runId)} on ${p.target} would, now (nothing was written):`,
    `  put back ${t.restore} of the ${t.images} row(s) it changed, in ${p.partitions.length} partition(s); ${t.asBefore} already as before the run`,
    `  leave ${t.conflicts} row(s) changed by someone since (conflicts: their keys are recorded when the revert runs)` +
      (t.held > 0 ? `; hold ${t.held} partition(s) whole (replace mode)` : ''),
    table.toString(),
    ...(p.partitions.length > LISTED ? [`… and ${p.partitions.length - LISTED} more partitions (-o json lists all)`] : []),
    `Revert it with: backfill revert ${p.runId} --reason "…"`,
  ].join('\n');
}
