/**
 * Where local state lives: the Temporal CLI cache outside the clone (a fresh clone on the
 * same machine finds it again), and dev data (.data/) inside the clone, or, for an installed
 * package, in the user's data directory (a package's folder is not the user's to fill).
 */
import os from 'node:os';
import path from 'node:path';

export const TEMPORAL_CLI_VERSION = 'v1.5.1';

export function cacheDir(): string {
  return path.join(process.env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache'), 'backfill');
}

export function projectRoot(): string {
  // dist/dev/paths.js and src/dev/paths.ts both sit two levels below the root
  return path.resolve(__dirname, '..', '..');
}

export function dataDir(): string {
  if (process.env.BACKFILL_DATA_DIR) return process.env.BACKFILL_DATA_DIR;
  const root = projectRoot();
  if (!root.split(path.sep).includes('node_modules')) return path.join(root, '.data');
  return path.join(process.env.XDG_DATA_HOME || path.join(os.homedir(), '.local', 'share'), 'backfill');
}
