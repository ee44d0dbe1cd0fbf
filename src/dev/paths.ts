/**
 * Where local state lives: the Temporal CLI cache outside the clone (a fresh clone on the
 * same machine finds it again), and dev data (.data/) inside it.
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
  return process.env.BACKFILL_DATA_DIR || path.join(projectRoot(), '.data');
}
