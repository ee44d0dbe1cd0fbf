/** `backfill status` and `backfill list`: the ledger's view of one run, or of recent runs. */
import Table from 'cli-table3';
import type pg from 'pg';
import { listRunSummaries, statusReport } from '../../operations/status';
import { RunStatus } from '../../shared/statuses';
import { emit, UsageError, type OutputOptions } from '../output';
import { plainStyle, renderStatus } from '../render/status';
import { withLedger } from '../session';

export async function statusCommand(ref: string | undefined, opts: OutputOptions & { database: string; all?: boolean }): Promise<void> {
  if (!ref && !opts.all) throw new UsageError('name a run (backfill status <run>) or list runs with: backfill list');
  await withLedger(opts.database, async ({ pool, findRun }) => {
    if (opts.all || !ref) return printRuns(pool, {}, opts);
    emit(opts, await statusReport(pool, await findRun(ref)), renderStatus);
  });
}

export async function listCommand(opts: OutputOptions & { database: string; status?: string; name?: string }): Promise<void> {
  if (opts.status && !(Object.values(RunStatus) as string[]).includes(opts.status)) {
    throw new UsageError(`--status must be one of ${Object.values(RunStatus).join(', ')} (got "${opts.status}")`);
  }
  await withLedger(opts.database, ({ pool }) => printRuns(pool, { status: opts.status, name: opts.name }, opts));
}

async function printRuns(pool: pg.Pool, filter: { status?: string; name?: string }, opts: OutputOptions): Promise<void> {
  emit(opts, await listRunSummaries(pool, filter), (list) => {
    const table = new Table({ style: plainStyle(), head: ['run', 'name', 'status', 'started by', 'created', 'finished'] });
    for (const r of list) table.push([r.runId, r.name, r.status, r.startedBy, r.createdAt, r.finishedAt ?? '']);
    return list.length === 0 ? 'No runs in this ledger.' : table.toString();
  });
}
