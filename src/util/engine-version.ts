import { readFileSync } from 'node:fs';
import path from 'node:path';

let cached: string | undefined;

/** This backfill's own version (package.json), recorded with each run it registers. */
export function engineVersion(): string {
  // src/util and dist/util both sit two levels below the package root
  cached ??= `backfill ${(JSON.parse(readFileSync(path.resolve(__dirname, '../../package.json'), 'utf8')) as { version: string }).version}`;
  return cached;
}

/** What `--version` prints: this backfill, and the Temporal SDK and Node.js it runs on. */
export function versionText(): string {
  const sdk = (JSON.parse(readFileSync(require.resolve('@temporalio/client/package.json'), 'utf8')) as { version: string }).version;
  return [engineVersion(), `Temporal TypeScript SDK ${sdk}`, `Node.js ${process.version}`].join('\n');
}
