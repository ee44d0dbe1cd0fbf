/**
 * Per-run facts a worker needs for every chunk — the frozen spec, the compiled
 * statements and the loaded transform module — read from the ledger once per run and
 * cached. A module transform runs from the artifact the run stored, whatever the worker's disk holds.
 */
import { ApplicationFailure } from '@temporalio/common';
import type pg from 'pg';
import { compileRun, type CompiledRun } from '../compiler/statements';
import { compileBeforeImages, type CompiledImages, type ImageTables } from '../undo/image-statements';
import { compileRevert, type CompiledRevert } from '../undo/restore-statements';
import { imageTablesOf } from '../ledger/before-images';
import type { RunRow } from '../ledger/runs';
import { resolveSpec, type ResolvedSpec } from '../specs/resolve';
import { artifactOriginRefusal } from '../security/module-origin';
import type { WorkerTrust } from '../security/worker-trust';
import { getArtifact } from '../ledger/artifacts';
import { FailureType } from '../domain/failures';
import { runOnThisDatabase } from './database-check';
import type { TransformModule } from '../transforms/define';
import { evaluateArtifact } from '../transforms/artifact';

export interface RunContext {
  run: RunRow;
  /** The run's spec, resolved once per worker (its ledger row holds it as written). */
  spec: ResolvedSpec;
  compiled: CompiledRun;
  module?: TransformModule;
  /** Where chunks keep their before-images, and how they take them; absent with `undo: off`. */
  images?: { tables: ImageTables; compiled: CompiledImages };
  /** A revert run: the run it undoes, and the statements that restore its images (chunks run these instead). */
  revert?: { of: string; compiled: CompiledRevert };
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
  const run = await runOnThisDatabase(pool, runId);
  const spec = resolveSpec(run.spec);
  const compiled = compileRun(spec, run.shape);
  if (run.reverts) {
    // a revert reads images, not the transform: nothing of the original's code is loaded
    return { run, spec, compiled, revert: { of: run.reverts, compiled: compileRevert(spec, run.shape, imageTablesOf(run.reverts), run.shape.revert!) } };
  }
  const images = run.undo_table ? { images: { tables: imageTablesOf(run.run_id), compiled: compileBeforeImages(spec, run.shape) } } : {};
  if (run.transform_kind === 'sql') return { run, spec, compiled, ...images };

  const artifact = await getArtifact(pool, run.transform_hash);
  if (!artifact) {
    throw ApplicationFailure.nonRetryable(
      `run ${runId} has no stored transform artifact (code ${run.transform_hash.slice(0, 12)}): it was registered by a backfill older than frozen transforms, ` +
        'or its ledger row was removed; cancel it and start it again, which freezes the module as it is now',
      FailureType.TransformChanged,
    );
  }
  const refusal = artifactOriginRefusal(trust, run.module_path!);
  if (refusal) throw ApplicationFailure.nonRetryable(`run ${runId}: ${refusal}`, FailureType.SpecInvalid);
  let module: TransformModule;
  try {
    module = evaluateArtifact(artifact, run.module_path!);
  } catch (err) {
    throw ApplicationFailure.nonRetryable(
      `run ${runId}: its transform ${run.module_path} cannot be loaded from the ledger: ${(err as Error).message}`,
      FailureType.TransformChanged,
    );
  }
  return { run, spec, compiled, module, ...images };
}
