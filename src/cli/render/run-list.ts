/** Runs as a table (`backfill list`, `backfill status --all`). */
import Table from 'cli-table3';
import type { RunSummary } from '../../operations/status';
import { plainStyle } from './status';

export function renderRunList(list: RunSummary[]): string {
  const table = new Table({ style: plainStyle(), head: ['run', 'name', 'status', 'started by', 'created', 'finished'] });
  for (const r of list) table.push([r.runId, r.name, r.status, r.startedBy, r.createdAt, r.finishedAt ?? '']);
  return list.length === 0 ? 'No runs in this ledger.' : table.toString();
}
