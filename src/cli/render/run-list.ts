/** Runs as a table (`backfill list`, `backfill status --all`). */
import Table from 'cli-table3';
import type { RunSummary } from '../../operations/status';
import { plainStyle } from './status';

/** `listLink`: the same runs in the Temporal Web UI, printed under the table. */
export function renderRunList(list: RunSummary[], listLink?: string): string {
  const table = new Table({ style: plainStyle(), head: ['run', 'name', 'status', 'started by', 'created', 'finished'] });
  for (const r of list) table.push([r.runId, r.name, r.status, r.startedBy, r.createdAt, r.finishedAt ?? '']);
  if (list.length === 0) return 'No runs in this ledger.';
  return listLink ? `${table.toString()}\nWeb UI: ${listLink}` : table.toString();
}
