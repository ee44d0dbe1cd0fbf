import Table from 'cli-table3';
import { listRuns } from '../../ledger/runs';
import { findRun, ledgerExists, openLedgerPool } from '../ledger-access';
import { emit, UsageError, type OutputOptions } from '../output';
import { plainStyle, renderStatus, statusReport } from '../status';

export async function statusCommand(ref: string | undefined, opts: OutputOptions & { database: string; all?: boolean }): Promise<void> {
  const pool = openLedgerPool(opts.database);
  try {
    if (opts.all || !ref) {
      if (!ref && !opts.all) throw new UsageError('name a run (backfill status <run>) or list runs with --all');
      const runs = (await ledgerExists(pool)) ? await listRuns(pool) : [];
      const rows = runs.map((r) => ({ runId: r.run_id, name: r.name, status: r.status, startedBy: r.started_by, createdAt: r.created_at.toISOString(), finishedAt: r.finished_at?.toISOString() ?? null }));
      emit(opts, rows, (list) => {
        const table = new Table({ style: plainStyle(), head: ['run', 'name', 'status', 'started by', 'created', 'finished'] });
        for (const r of list) table.push([r.runId, r.name, r.status, r.startedBy, r.createdAt, r.finishedAt ?? '']);
        return list.length === 0 ? 'No runs in this ledger.' : table.toString();
      });
      return;
    }
    const run = await findRun(pool, ref, opts.database);
    emit(opts, await statusReport(pool, run), renderStatus);
  } finally {
    await pool.end();
  }
}
