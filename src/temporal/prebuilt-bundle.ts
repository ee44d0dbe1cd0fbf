/**
 * The workflow bundle `npm run build` writes beside the compiled code (dist/workflows.bundle.js),
 * so a worker starts without running webpack: about 3 s and 5 s of CPU on a two-core machine,
 * paid again by every worker that replaces one that crashed. A worker uses it only when it is
 * at least as new as the compiled workflows (a `tsc` run without the bundle step leaves it
 * stale: the worker then bundles as it starts, as it always could) and when it does not encrypt
 * payloads (that bundle must carry the failure converter; it is bundled at start).
 *
 * Run as a script (the build's last step) it writes the bundle.
 */
import { existsSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { bundleWorkflowCode } from '@temporalio/worker';

const DIST = path.join(__dirname, '..');
const bundleIn = (dist: string) => path.join(dist, 'workflows.bundle.js');
const workflowsEntryIn = (dist: string) => path.join(dist, 'workflows', 'index.js');

/** The prebuilt bundle in `dist`, when it exists and nothing of the workflows was compiled after it. */
export function prebuiltBundle(dist = DIST): { codePath: string } | undefined {
  const bundle = bundleIn(dist);
  const entry = workflowsEntryIn(dist);
  if (!existsSync(bundle) || !existsSync(entry)) return undefined;
  return statSync(bundle).mtimeMs >= statSync(entry).mtimeMs ? { codePath: bundle } : undefined;
}

/** The bundler's logger, silenced: its webpack progress lines are noise in a build or a test run. */
export const QUIET_BUNDLER_LOGGER = { trace() {}, debug() {}, info() {}, warn() {}, error() {}, log() {} } as never;

async function writePrebuiltBundle(): Promise<void> {
  const { code } = await bundleWorkflowCode({ workflowsPath: workflowsEntryIn(DIST), logger: QUIET_BUNDLER_LOGGER });
  writeFileSync(bundleIn(DIST), code);
}

if (require.main === module) {
  writePrebuiltBundle().catch((err: Error) => {
    process.stderr.write(`bundling the workflows failed: ${err.message}\n`);
    process.exit(1);
  });
}
