import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

/** src/util and dist/util both sit two levels below the package root. */
const PACKAGE_ROOT = path.resolve(__dirname, '../..');
/** Written by the build beside the compiled code: a package installed from its tarball has no git to ask. */
const BUILD_INFO = path.resolve(__dirname, '..', 'build-info.json');

interface PackageJson {
  name: string;
  version: string;
}

/** Which code this is: the commit it was built from, and whether the tree held changes not in that commit. */
export interface BuildInfo {
  commit: string | null;
  modified: boolean;
}

let packageJson: PackageJson | undefined;
let build: BuildInfo | undefined;

function ownPackage(): PackageJson {
  packageJson ??= JSON.parse(readFileSync(path.join(PACKAGE_ROOT, 'package.json'), 'utf8')) as PackageJson;
  return packageJson;
}

/** The name this package is installed under (a transform imports `<name>/transform`). */
export function packageName(): string {
  return ownPackage().name;
}

/** The commit of the checkout at PACKAGE_ROOT, or BACKFILL_COMMIT where there is no git (an image build). */
export function commitFromCheckout(): BuildInfo {
  try {
    const git = (...args: string[]) => execFileSync('git', args, { cwd: PACKAGE_ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    const commit = git('rev-parse', 'HEAD');
    return { commit, modified: git('status', '--porcelain', '--untracked-files=no').length > 0 };
  } catch {
    const given = process.env.BACKFILL_COMMIT?.trim();
    return { commit: given && /^[0-9a-f]{7,40}$/.test(given) ? given : null, modified: false };
  }
}

function buildInfo(): BuildInfo {
  // compiled code answers with what its build recorded; code run from source asks git now
  build ??= existsSync(BUILD_INFO) ? (JSON.parse(readFileSync(BUILD_INFO, 'utf8')) as BuildInfo) : commitFromCheckout();
  return build;
}

/**
 * This backfill's own version and the commit it was built from, recorded with each run it
 * registers and printed by `--version`: `backfill 1.0.0 (commit 0123456789ab)`, with
 * `, modified` when the build's tree held uncommitted changes.
 */
export function engineVersion(): string {
  const { commit, modified } = buildInfo();
  const which = commit ? `commit ${commit.slice(0, 12)}${modified ? ', modified' : ''}` : 'commit unknown';
  return `backfill ${ownPackage().version} (${which})`;
}

/** What `--version` prints: this backfill, and the Temporal SDK and Node.js it runs on. */
export function versionText(): string {
  const sdk = (JSON.parse(readFileSync(require.resolve('@temporalio/client/package.json'), 'utf8')) as { version: string }).version;
  return [engineVersion(), `Temporal TypeScript SDK ${sdk}`, `Node.js ${process.version}`].join('\n');
}

// the build's step after tsc: record the commit beside the compiled code
if (require.main === module) {
  writeFileSync(BUILD_INFO, JSON.stringify(commitFromCheckout()) + '\n');
}
