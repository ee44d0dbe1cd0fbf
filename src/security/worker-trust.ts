/**
 * What a worker agrees to act on. Anyone who can start a workflow on the namespace can hand
 * a worker a spec, so the worker does not take the spec's word for where to connect or what
 * code to load: `database` must name a variable on its allow-list (BACKFILL_DATABASES), and a
 * module transform must live under one of its transform directories (BACKFILL_TRANSFORM_DIRS).
 * Read from the environment at the worker's edge; see docs/security.md.
 */
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

/** The variables a worker's database list names that are set here (an entry ending in `*` names every variable it starts). */
export function servedDatabases(entries: readonly string[], env: NodeJS.ProcessEnv = process.env): string[] {
  const names = entries.flatMap((entry) => (entry.endsWith('*') ? Object.keys(env).filter((k) => k.startsWith(entry.slice(0, -1))) : [entry]));
  return [...new Set(names)].filter((name) => env[name]);
}

export function databaseAllowed(trust: Pick<WorkerTrust, 'databases'>, name: string): boolean {
  return trust.databases.some((entry) => (entry.endsWith('*') ? name.startsWith(entry.slice(0, -1)) : name === entry));
}

export function databaseRefusal(trust: Pick<WorkerTrust, 'databases'>, name: string): string {
  return (
    `database ${name} is not one this worker serves (BACKFILL_DATABASES=${trust.databases.join(',')}); ` +
    `name an allowed variable in the spec, or add ${name} to BACKFILL_DATABASES on the workers (docs/configuration.md)`
  );
}
