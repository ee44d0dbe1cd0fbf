import Table from 'cli-table3';
import type pg from 'pg';
import { listRuns } from '../../ledger/runs';
import { RunStatus } from '../../shared/statuses';
import { findRun, ledgerExists, openLedgerPool } from '../ledger-access';
import { emit, UsageError, type OutputOptions } from '../output';
import { plainStyle, renderStatus, statusReport } from '../status';

export async function statusCommand(ref: string | undefined, opts: OutputOptions & { database: string; all?: boolean }): Promise<void> {
  const pool = openLedgerPool(opts.database);
  try {
    if (opts.all || !ref) {
      if (!ref && !opts.all) throw new UsageError('name a run (backfill status <run>) or list runs with: backfill list');
      return await printRuns(pool, {}, opts);
    }
    const run = await findRun(pool, ref, opts.database);
    emit(opts, await statusReport(pool, run), renderStatus);
  } finally {
    await pool.end();
  }
}

export async function listCommand(opts: OutputOptions & { database: string; status?: string; name?: string }): Promise<void> {
  if (opts.status && !(Object.values(RunStatus) as string[]).includes(opts.status)) {
    throw new UsageError(`--status must be one of ${Object.values(RunStatus).join(', ')} (got "${opts.status}")`);
  }
  const pool = openLedgerPool(opts.database);
  try {
    await printRuns(pool, { status: opts.status, name: opts.name }, opts);
  } finally {
    await pool.end();
  }
}

async function printRuns(pool: pg.Pool, filter: { status?: string; name?: string }, opts: OutputOptions): Promise<void> {
  const runs = (await ledgerExists(pool)) ? await listRuns(pool, { name: filter.name, status: filter.status }) : [];
  const rows = runs.map((r) => ({ runId: r.run_id, name: r.name, status: r.status, startedBy: r.started_by, createdAt: r.created_at.toISOString(), finishedAt: r.finished_at?.toISOString() ?? null }));
  emit(opts, rows, (list) => {
    const table = new Table({ style: plainStyle(), head: ['run', 'name', 'status', 'started by', 'created', 'finished'] });
    for (const r of list) table.push([r.runId, r.name, r.status, r.startedBy, r.createdAt, r.finishedAt ?? '']);
    return list.length === 0 ? 'No runs in this ledger.' : table.toString();
  });
}
