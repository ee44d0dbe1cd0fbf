/**
 * `backfill verify <revert run>` (docs/undo.md): every before-image the revert restored is
 * checked against the target again, days later if need be — each row must be as it was before
 * the original run, or be one of the conflicts the revert recorded. A row still as the original
 * run left it, or a row changed since the revert, is a mismatch. Reads only.
 */
import { resolveSpec } from '../specs/resolve';
import type pg from 'pg';
import { compileRevert } from './restore-statements';
import { imageTablesOf } from '../ledger/before-images';
import { listPartitions } from '../ledger/partitions';
import { chunkTransactions, conflictsByPartition } from '../ledger/reverts';
import type { RunRow } from '../ledger/runs';
import { UsageError } from '../domain/usage-error';
import type { VerifiedPartition, VerifyOptions, VerifyReport } from '../operations/verify-report';

export async function verifyRevert(pool: pg.Pool, run: RunRow, options: VerifyOptions = {}): Promise<VerifyReport> {
  const of = run.reverts!;
  const compiled = compileRevert(resolveSpec(run.spec), run.shape, imageTablesOf(of), run.shape.revert ?? {});
  const all = await listPartitions(pool, run.run_id, { limit: 1_000_000 });
  const rows = options.partition ? all.filter((p) => p.partition_id === options.partition) : all;
  if (options.partition && rows.length === 0)
    throw new UsageError(`run ${run.run_id} has no partition ${options.partition}; list them with: backfill status ${run.run_id} --partitions`);
  const recorded = await conflictsByPartition(pool, run.run_id);
  const report: VerifyReport = { runId: run.run_id, name: run.name, clean: true, rowsCompared: 0, partitions: [], runInvariants: [], skipped: [] };
  const checkable = rows.filter((p) => p.status === 'succeeded');
  report.skipped = rows.filter((p) => p.status !== 'succeeded').map((p) => ({ id: p.partition_id, status: p.status }));
  for (const [i, p] of checkable.entries()) {
    let images = 0;
    let after = 0;
    let conflicts = 0;
    for (const xid of await chunkTransactions(pool, of, p.partition_id)) {
      const t = compiled.tally(xid);
      const { rows: r } = await pool.query<{ images: number; after: number; conflicts: number }>(t.text, t.values);
      images += r[0].images;
      after += r[0].after;
      conflicts += r[0].conflicts;
    }
    const changedSince = Math.max(0, conflicts - (recorded.get(p.partition_id) ?? 0));
    const wrong = after + changedSince;
    const verified: VerifiedPartition = {
      id: p.partition_id,
      status: p.status,
      wrong,
      // `missing`: still as the original run left them; `differing`: changed since the revert
      comparison: { compared: images, missing: after, differing: changedSince, extra: 0, examples: [], ranges: [] },
      invariants: [],
    };
    report.rowsCompared += images;
    if (wrong > 0) report.clean = false;
    report.partitions.push(verified);
    options.onPartition?.(verified, i + 1, checkable.length);
  }
  return report;
}
