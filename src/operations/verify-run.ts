/**
 * `backfill verify <run>`: the transform recomputed from the run's frozen spec (and, for a
 * TypeScript transform, the module whose code hash the run recorded) and compared with the
 * target now, partition by partition, with the spec's invariants; usable days after the run.
 * Wrong rows are reported by key, with the key ranges that hold them. Writes nothing but its
 * results, to backfill.gate_results (stage `verify`).
 */
import { resolveSpec } from '../specs/resolve';
import type pg from 'pg';
import type { RunRow } from '../ledger/runs';
import { partitionsToVerify } from '../ledger/partition-reads';
import { artifactOriginRefusal } from '../security/module-origin';
import { workerTrustFromEnv } from '../security/worker-trust';
import { getArtifact } from '../ledger/artifacts';
import { DEFAULT_STATEMENT_TIMEOUT_SECONDS } from '../domain/limits';
import { compileRun } from '../compiler/statements';
import { evaluateArtifact } from '../transforms/artifact';
import type { Recomputable } from '../gates/compare';
import { wrongRows } from '../gates/compare';
import { checkPartition, checkRunInvariants, emptyTally, recordTally, typesFor, type GateContext } from '../gates/gate-checks';
import type { VerifiedPartition, VerifyOptions, VerifyReport } from './verify-report';
import { UsageError } from '../domain/usage-error';
import { verifyRevert } from '../undo/verify-revert';

export type { VerifiedPartition, VerifyOptions, VerifyReport } from './verify-report';

export async function verifyRun(pool: pg.Pool, run: RunRow, options: VerifyOptions = {}): Promise<VerifyReport> {
  // a revert is checked against the images it restored, not by recomputing the transform it undid
  if (run.reverts) return verifyRevert(pool, run, options);
  const ctx = await recomputable(pool, run);
  const rows = await partitionsToVerify(pool, run.run_id, options.partition ?? null);
  if (options.partition && rows.length === 0)
    throw new UsageError(`run ${run.run_id} has no partition ${options.partition}; list them with: backfill status ${run.run_id} --partitions`);
  const g: GateContext = {
    pool,
    ctx,
    runId: run.run_id,
    attempt: run.attempt,
    stage: 'verify',
    sampleEvery: 1,
    timeoutMs: (run.spec.limits.statementTimeoutSeconds ?? DEFAULT_STATEMENT_TIMEOUT_SECONDS) * 1000,
    pageRows: Math.min(20_000, run.spec.limits.chunkSize),
    recordPassing: true,
  };
  const types = await typesFor(g);
  const tally = emptyTally();
  const report: VerifyReport = { runId: run.run_id, name: run.name, clean: true, rowsCompared: 0, partitions: [], runInvariants: [], skipped: [] };
  const checkable = rows.filter((r) => r.status === 'succeeded' || options.partition);
  report.skipped = rows.filter((r) => !checkable.includes(r)).map((r) => ({ id: r.partition_id, status: r.status }));
  for (const [i, r] of checkable.entries()) {
    const findings = await checkPartition(g, { id: r.partition_id, bounds: r.bounds }, tally, types);
    const c = findings.comparison;
    const wrong = (c ? wrongRows(c, run.spec.target.mode) : 0) + findings.invariants.reduce((n, x) => n + x.violations, 0);
    const verified: VerifiedPartition = { id: r.partition_id, status: r.status, wrong, ...findings };
    report.rowsCompared += c?.compared ?? 0;
    if (wrong > 0) report.clean = false;
    report.partitions.push(verified);
    options.onPartition?.(verified, i + 1, checkable.length);
  }
  if (!options.partition) {
    report.runInvariants = await checkRunInvariants(g, tally);
    if (report.runInvariants.some((x) => x.violations > 0)) report.clean = false;
  }
  await recordTally(g, tally);
  return report;
}

/** The run's frozen transform, ready to recompute: its SQL, or the module bundle the run stored. */
async function recomputable(pool: pg.Pool, run: RunRow): Promise<Recomputable> {
  const spec = resolveSpec(run.spec);
  const compiled = compileRun(spec, run.shape);
  if (run.transform_kind === 'sql') return { run, spec, compiled };
  const artifact = await getArtifact(pool, run.transform_hash);
  if (!artifact) {
    throw new UsageError(
      `cannot verify run ${run.run_id}: the ledger holds no transform artifact with its code ${run.transform_hash.slice(0, 12)} (a run registered before transforms were frozen); verify it with the backfill version that ran it`,
    );
  }
  const refusal = artifactOriginRefusal(workerTrustFromEnv(), run.module_path!);
  if (refusal) throw new UsageError(`cannot verify run ${run.run_id}: ${refusal}`);
  return { run, spec, compiled, module: evaluateArtifact(artifact, run.module_path!) };
}
