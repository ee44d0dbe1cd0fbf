/**
 * Per-run facts a worker needs for every chunk — the frozen spec, the compiled
 * statements and the loaded transform module — read from the ledger once per run and
 * cached. This is where a worker refuses a run whose transform differs from its own.
 */
import { ApplicationFailure } from '@temporalio/common';
import type pg from 'pg';
import { compileRun, type CompiledRun } from '../sql/statements';
import { getRun, type RunRow } from '../ledger/runs';
import { checkModulePath, type WorkerTrust } from '../security/worker-trust';
import { FailureType } from '../shared/failures';
import { refuseOtherDatabase, wrongDatabase } from './database-check';
import type { TransformModule } from '../transforms/define';
import { loadTransformModule } from '../transforms/load-module';

export interface RunContext {
  run: RunRow;
  compiled: CompiledRun;
  module?: TransformModule;
}

export class RunContextCache {
  private readonly cache = new Map<string, Promise<RunContext>>();

  constructor(private readonly trust: Pick<WorkerTrust, 'transformDirs'>) {}

  get(pool: pg.Pool, runId: string): Promise<RunContext> {
    let ctx = this.cache.get(runId);
    if (!ctx) {
      ctx = loadRunContext(pool, runId, this.trust);
      ctx.catch(() => this.cache.delete(runId));
      this.cache.set(runId, ctx);
    }
    return ctx;
  }
}

async function loadRunContext(pool: pg.Pool, runId: string, trust: Pick<WorkerTrust, 'transformDirs'>): Promise<RunContext> {
  const run = await getRun(pool, runId).catch((err: { code?: string }) => {
    if (err.code === '42P01') return undefined; // no ledger at all in the database this worker reaches
    throw err;
  });
  if (!run) {
    throw wrongDatabase(`run ${runId} is not in the ledger of the database this worker reaches; was it registered against another one? Check the database variables of this worker`);
  }
  // a ledger restored or copied elsewhere holds the run too: the database's identity decides
  await refuseOtherDatabase(pool, run.database_identity, runId, run.database_var);
  const compiled = compileRun(run.spec, run.shape);
  if (run.transform_kind === 'sql') return { run, compiled };

  const allowed = checkModulePath(trust, run.module_path!);
  if (!allowed.ok) throw ApplicationFailure.nonRetryable(`run ${runId}: ${allowed.message}`, FailureType.SpecInvalid);
  let loaded;
  try {
    loaded = loadTransformModule(allowed.path);
  } catch (err) {
    throw ApplicationFailure.nonRetryable(
      `run ${runId} needs transform module ${run.module_path}, which this worker cannot load: ${(err as Error).message}; deploy it at that path`,
      FailureType.TransformChanged,
    );
  }
  if (loaded.codeHash !== run.transform_hash) {
    throw ApplicationFailure.nonRetryable(
      `transform ${run.transform_name}@${run.transform_version} on this worker (${run.module_path}, code ${loaded.codeHash.slice(0, 12)}) ` +
        `differs from the one run ${runId} froze (code ${run.transform_hash.slice(0, 12)}); deploy the run's version, or start a new run with a new transform.version`,
      FailureType.TransformChanged,
    );
  }
  return { run, compiled, module: loaded.module };
}
