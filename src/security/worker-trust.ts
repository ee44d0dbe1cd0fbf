/**
 * What a worker agrees to act on. Anyone who can start a workflow on the namespace can hand
 * a worker a spec, so the worker does not take the spec's word for where to connect or what
 * code to load: `database` must name a variable on its allow-list (BACKFILL_DATABASES), and a
 * module transform must live under one of its transform directories (BACKFILL_TRANSFORM_DIRS).
 * Read from the environment at the worker's edge; see docs/security.md.
 */
import { realpathSync } from 'node:fs';
import path from 'node:path';

export interface WorkerTrust {
  /** Environment variable names the worker may connect through; `PREFIX_*` allows a family. */
  databases: readonly string[];
  /** Directories module transforms may be loaded from (resolved, symlinks followed). */
  transformDirs: readonly string[];
  /** URL prefixes an `after: webhook` action may POST to (BACKFILL_WEBHOOK_URLS); none by default. */
  webhookUrls?: readonly string[];
}

export const DEFAULT_DATABASES = ['DATABASE_URL'];

export function workerTrustFromEnv(env: NodeJS.ProcessEnv = process.env, cwd = process.cwd()): WorkerTrust {
  const list = (value: string | undefined, sep: string) =>
    (value ?? '')
      .split(sep)
      .map((s) => s.trim())
      .filter(Boolean);
  const databases = list(env.BACKFILL_DATABASES, ',');
  const dirs = list(env.BACKFILL_TRANSFORM_DIRS, path.delimiter);
  return {
    databases: databases.length > 0 ? databases : DEFAULT_DATABASES,
    transformDirs: (dirs.length > 0 ? dirs : [cwd]).map((d) => path.resolve(cwd, d)),
    webhookUrls: list(env.BACKFILL_WEBHOOK_URLS, ','),
  };
}

/**
 * A spec's webhook is a URL from whoever can start a run: the worker POSTs only to prefixes
 * its operator listed, so a spec cannot make it reach internal services.
 */
export function webhookRefusal(trust: Pick<WorkerTrust, 'webhookUrls'>, url: string): string | undefined {
  const allowed = trust.webhookUrls ?? [];
  if (allowed.some((prefix) => url.startsWith(prefix))) return undefined;
  return `webhook ${new URL(url).origin} is not on this worker's BACKFILL_WEBHOOK_URLS (${allowed.length > 0 ? allowed.join(', ') : 'empty'}); add its URL prefix where the worker is started, then: backfill after <run>`;
}

export function databaseAllowed(trust: Pick<WorkerTrust, 'databases'>, name: string): boolean {
  return trust.databases.some((entry) => (entry.endsWith('*') ? name.startsWith(entry.slice(0, -1)) : name === entry));
}

export function databaseRefusal(trust: Pick<WorkerTrust, 'databases'>, name: string): string {
  return (
    `database ${name} is not one this worker serves (BACKFILL_DATABASES=${trust.databases.join(',')}); ` +
    `name an allowed variable in the spec, or add ${name} to BACKFILL_DATABASES on the workers (README "Configuration")`
  );
}

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
