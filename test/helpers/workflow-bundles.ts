/**
 * The workflow bundles in-process test workers run. Bundling is webpack, about 5 s of CPU, and
 * some 45 integration files start workers: the integration tier's global setup builds each bundle
 * once into its temporary directory, and every file reads it from there. Without that setup (a
 * script, another tier) a bundle is built on first use, once per process.
 */
import { bundleWorkflowCode, type WorkflowBundleWithSourceMap } from '@temporalio/worker';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { QUIET_BUNDLER_LOGGER } from '../../src/temporal/prebuilt-bundle';

export type BundleKind = 'plain' | 'encrypted';

/** The environment variable naming each bundle's file, set by the global setup. */
const FILE_VARIABLE: Record<BundleKind, string> = {
  plain: 'BACKFILL_TEST_WORKFLOW_BUNDLE',
  // failures are encoded inside the sandbox too: a worker with payload encryption needs the converter bundled
  encrypted: 'BACKFILL_TEST_ENCRYPTED_WORKFLOW_BUNDLE',
};

function build(kind: BundleKind): Promise<WorkflowBundleWithSourceMap> {
  return bundleWorkflowCode({
    workflowsPath: require.resolve('../../src/workflows'),
    ...(kind === 'encrypted' ? { failureConverterPath: require.resolve('../../src/temporal/failure-converter') } : {}),
    logger: QUIET_BUNDLER_LOGGER,
  });
}

/** Builds every bundle into `dir` and names the files in the environment the test workers inherit. */
export async function writeWorkflowBundles(dir: string): Promise<void> {
  await Promise.all(
    (Object.keys(FILE_VARIABLE) as BundleKind[]).map(async (kind) => {
      const file = path.join(dir, `workflow-bundle-${kind}.json`);
      const { code, sourceMap } = await build(kind);
      writeFileSync(file, JSON.stringify({ code, sourceMap }));
      process.env[FILE_VARIABLE[kind]] = file;
    }),
  );
}

const built = new Map<BundleKind, Promise<WorkflowBundleWithSourceMap>>();

export function workflowBundleOf(kind: BundleKind): Promise<WorkflowBundleWithSourceMap> {
  const file = process.env[FILE_VARIABLE[kind]];
  if (file) return Promise.resolve(JSON.parse(readFileSync(file, 'utf8')) as WorkflowBundleWithSourceMap);
  if (!built.has(kind)) built.set(kind, build(kind));
  return built.get(kind)!;
}
