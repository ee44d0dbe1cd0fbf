import { readFileSync } from 'node:fs';
import path from 'node:path';

let cached: string | undefined;

/** This backfill's own version (package.json), recorded with each run it registers. */
export function engineVersion(): string {
  // src/util and dist/util both sit two levels below the package root
  cached ??= `backfill ${(JSON.parse(readFileSync(path.resolve(__dirname, '../../package.json'), 'utf8')) as { version: string }).version}`;
  return cached;
}
