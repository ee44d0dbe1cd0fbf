/**
 * Where a module transform's code may come from: a worker loads (or runs the stored artifact
 * of) a module only from inside its transform directories (BACKFILL_TRANSFORM_DIRS), checked
 * on real paths, so a spec or a link cannot make it run code its operator did not place there.
 */
import { realpathSync } from 'node:fs';
import path from 'node:path';
import type { WorkerTrust } from './worker-trust';

/**
 * The module's real path when it lies inside an allowed directory, else why not. Symlinks
 * are followed on both sides, so a link inside an allowed directory cannot point outside it.
 */
export function checkModulePath(trust: Pick<WorkerTrust, 'transformDirs'>, modulePath: string): { ok: true; path: string } | { ok: false; message: string } {
  let real: string;
  try {
    real = realpathSync(modulePath);
  } catch {
    return { ok: false, message: `transform module ${modulePath} does not exist on this worker; deploy it there` };
  }
  for (const dir of trust.transformDirs) {
    let base: string;
    try {
      base = realpathSync(dir);
    } catch {
      continue;
    }
    const rel = path.relative(base, real);
    if (rel !== '' && !rel.startsWith('..') && !path.isAbsolute(rel)) return { ok: true, path: real };
  }
  return {
    ok: false,
    message:
      `transform module ${modulePath} is outside this worker's transform directories (BACKFILL_TRANSFORM_DIRS=${trust.transformDirs.join(path.delimiter)}); ` +
      'deploy the module under one of them, or add its directory to BACKFILL_TRANSFORM_DIRS on the workers',
  };
}

/**
 * A run's stored transform artifact is run only if it was bundled from inside this worker's
 * transform directories: the registering worker checked the real path, and the same path must
 * lie inside this worker's directories too, so a worker never runs code its operator did not
 * place under a directory they allowed. The file itself need not exist here (the artifact is
 * the code), which lets a new worker on another machine join a run.
 */
export function artifactOriginRefusal(trust: Pick<WorkerTrust, 'transformDirs'>, sourcePath: string): string | undefined {
  for (const dir of trust.transformDirs) {
    const bases = [path.resolve(dir)];
    try {
      bases.push(realpathSync(dir));
    } catch {
      // a directory missing on this worker still allows paths under its name
    }
    for (const base of bases) {
      const rel = path.relative(base, sourcePath);
      if (rel !== '' && !rel.startsWith('..') && !path.isAbsolute(rel)) return undefined;
    }
  }
  return (
    `its transform was bundled from ${sourcePath}, outside this worker's transform directories (BACKFILL_TRANSFORM_DIRS=${trust.transformDirs.join(path.delimiter)}); ` +
    'add that directory to BACKFILL_TRANSFORM_DIRS on this worker, or run the run on workers that allow it'
  );
}
