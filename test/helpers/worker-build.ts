/**
 * A second build of the worker, shipped as a deploy ships one: a copy of the compiled dist/ (and
 * package.json) in node_modules/.cache, where Node and the workflow bundler still find the
 * project's packages, with two changes made to its compiled code:
 * - the run workflow, behind `patched('upgrade-test-build-b')`, records `lastLaunchBy: 'build-b'`
 *   in its memo as it starts each partition: a new command at a point A's history already passed,
 *   so B must take the old path while it replays A's launches (unpatched, the replay fails as
 *   nondeterministic and the run stalls) and the new one for the launches it makes;
 * - the partition activity tags the chunks it writes (`<identity>+activity-b` in the chunk log).
 * Each change must find its anchor exactly once, or the build fails: a refactor that moves the
 * code fails the test that needs it instead of silently testing nothing.
 */
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '..', '..');

export const BUILD_B_PATCH = 'upgrade-test-build-b';
export const BUILD_B_ACTIVITY_TAG = '+activity-b';

interface Change {
  file: string;
  anchor: string;
  replacement: string;
}

const CHANGES: Change[] = [
  {
    // where every partition starts: A's history passed here, so B's replay must take the old path
    file: 'workflows/run/execution.js',
    anchor: '    async startPartition(partitionId) {\n',
    replacement: `    async startPartition(partitionId) {\n        if ((0, workflow_1.patched)('${BUILD_B_PATCH}')) (0, workflow_1.upsertMemo)({ lastLaunchBy: 'build-b' });\n`,
  },
  {
    file: 'activities/process-partition.js',
    anchor: 'worker: deps.workerIdentity,',
    replacement: `worker: \`\${deps.workerIdentity}${BUILD_B_ACTIVITY_TAG}\`,`,
  },
];

/** Writes build B beside the project and returns the path of its worker entry (its dist/worker.js). */
export function writeBuildB(): string {
  const dist = path.join(ROOT, 'dist');
  if (!existsSync(path.join(dist, 'worker.js'))) throw new Error('dist/worker.js is missing: npm test builds it first (npm run build)');
  const home = path.join(ROOT, 'node_modules', '.cache', 'backfill-build-b');
  rmSync(home, { recursive: true, force: true });
  mkdirSync(home, { recursive: true });
  cpSync(dist, path.join(home, 'dist'), { recursive: true });
  cpSync(path.join(ROOT, 'package.json'), path.join(home, 'package.json'));
  for (const change of CHANGES) {
    const file = path.join(home, 'dist', change.file);
    const code = readFileSync(file, 'utf8');
    const found = code.split(change.anchor).length - 1;
    if (found !== 1) throw new Error(`build B: "${change.anchor}" occurs ${found} times in dist/${change.file}, not once; update test/helpers/worker-build.ts`);
    writeFileSync(file, code.replace(change.anchor, change.replacement));
  }
  // its own workflow bundle, as its build would write it (the copied one is A's workflows)
  execFileSync(process.execPath, [path.join(home, 'dist', 'temporal', 'prebuilt-bundle.js')], { stdio: 'pipe' });
  return path.join(home, 'dist', 'worker.js');
}
