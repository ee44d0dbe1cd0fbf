/**
 * The release as a user gets it: `npm pack` of this checkout's build, installed globally on a
 * HOME and npm cache that hold nothing (every dependency from the registry), then used from a
 * directory that is not the clone: `--version` names the version and commit, `validate` and `plan`
 * take an example spec, `worker` starts and drains, `dev` brings up its services and stops them on Ctrl-C.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { freePort } from '../src/dev/temporal-server';
import { cachedCliPath } from '../src/dev/temporal-cli';
import { createTestDatabase, type TestDatabase } from './helpers/db';
import { temporalAddress } from './helpers/temporal';
import { startsFirst } from './helpers/turns';
import { portOpen } from './helpers/wait';
import { uniqueName } from './helpers/unique';

startsFirst('it installs the package and its dependencies from the registry: a minute or more');

const run = promisify(execFile);
const ROOT = path.join(__dirname, '..');
const pkg = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { name: string; version: string };

let tmp: string;
let prefix: string;
let elsewhere: string;
let db: TestDatabase;
let userEnv: NodeJS.ProcessEnv;

/** The installed command, as a shell on PATH finds it, from `elsewhere`, with nothing of the clone's environment. */
function backfill(args: string[], env: NodeJS.ProcessEnv = {}) {
  return run(path.join(prefix, 'bin', 'backfill'), args, { cwd: elsewhere, env: { ...userEnv, ...env }, maxBuffer: 20 * 1024 * 1024 });
}

/** Waits until `child`'s output (stdout and stderr) holds `text`, or fails with what it said. */
function outputOf(child: ChildProcess): { until(text: string | RegExp, ms: number): Promise<string> } {
  let seen = '';
  child.stdout?.on('data', (d: Buffer) => (seen += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (seen += d.toString()));
  return {
    until: (text, ms) =>
      new Promise((resolve, reject) => {
        const started = Date.now();
        const look = setInterval(() => {
          const found = typeof text === 'string' ? seen.includes(text) : text.test(seen);
          if (found) {
            clearInterval(look);
            resolve(seen);
          } else if (Date.now() - started > ms || child.exitCode !== null) {
            clearInterval(look);
            reject(new Error(`did not say ${String(text)} (exit ${child.exitCode}):\n${seen}`));
          }
        }, 200);
      }),
  };
}

const exited = (child: ChildProcess) =>
  new Promise<number | null>((resolve) => (child.exitCode !== null ? resolve(child.exitCode) : child.once('exit', (code) => resolve(code))));

beforeAll(async () => {
  tmp = mkdtempSync(path.join(os.tmpdir(), 'backfill-install-'));
  prefix = path.join(tmp, 'prefix');
  elsewhere = path.join(tmp, 'work');
  const home = path.join(tmp, 'home');
  for (const dir of [prefix, elsewhere, home]) mkdirSync(dir, { recursive: true });
  // the tarball of what was built (the suite's build): packing must not rebuild under the other files' workers
  const { stdout } = await run('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', tmp], { cwd: ROOT });
  const tarball = path.join(tmp, (JSON.parse(stdout) as { filename: string }[])[0].filename);
  // the network's own settings pass through (a proxy, a TLS-inspecting CA): a user's machine has them too
  const network = Object.fromEntries(Object.entries(process.env).filter(([key]) => /proxy|^NODE_EXTRA_CA_CERTS$|^SSL_CERT_(FILE|DIR)$/i.test(key)));
  const cafile = (await run('npm', ['config', 'get', 'cafile'], { cwd: ROOT })).stdout.trim();
  userEnv = {
    ...network,
    ...(cafile && cafile !== 'null' && cafile !== 'undefined' ? { npm_config_cafile: cafile } : {}),
    PATH: `${path.join(prefix, 'bin')}:${path.dirname(process.execPath)}:/usr/bin:/bin`,
    HOME: home,
    npm_config_cache: path.join(tmp, 'npm-cache'),
    npm_config_registry: (await run('npm', ['config', 'get', 'registry'], { cwd: ROOT })).stdout.trim(),
    LOG_LEVEL: 'warn',
  };
  await run('npm', ['install', '--global', '--prefix', prefix, '--no-audit', '--no-fund', tarball], {
    cwd: elsewhere,
    env: userEnv,
    maxBuffer: 20 * 1024 * 1024,
  });
  db = await createTestDatabase('install');
  await db.pool.query(`
    CREATE SCHEMA demo;
    CREATE TABLE demo.fx_rates (currency text PRIMARY KEY, usd_rate numeric(12,6) NOT NULL);
    INSERT INTO demo.fx_rates VALUES ('USD', 1), ('EUR', 1.0832);
    CREATE TABLE demo.orders (id bigint PRIMARY KEY, created_at timestamptz NOT NULL, currency text, amount_cents bigint, status text NOT NULL);
    INSERT INTO demo.orders SELECT n, timestamptz '2024-01-01' + n * interval '1 hour', 'EUR', 100 * n, 'paid' FROM generate_series(1, 200) n;
    CREATE INDEX ON demo.orders (created_at);
    CREATE TABLE demo.orders_usd (id bigint PRIMARY KEY, currency text, amount_usd numeric(14,2));`);
  cpSync(path.join(prefix, 'lib', 'node_modules', ...pkg.name.split('/'), 'examples'), path.join(elsewhere, 'examples'), { recursive: true });
}, 600_000);

afterAll(async () => {
  await db?.drop();
  rmSync(tmp, { recursive: true, force: true });
});

test('the installed backfill --version names the version and the commit it was built from', async () => {
  const { stdout } = await backfill(['--version']);
  const [engine, sdk, node] = stdout.trim().split('\n');
  expect(engine).toMatch(new RegExp(`^backfill ${pkg.version.replace(/\./g, '\\.')} \\(commit [0-9a-f]{12}(, modified)?\\)$`));
  expect(sdk).toMatch(/^Temporal TypeScript SDK 1\.24\./);
  expect(node).toBe(`Node.js ${process.version}`);
});

test('validate and plan take the packaged examples from another directory, TypeScript transform included', async () => {
  const valid = await backfill(['validate', 'examples/orders-usd.yaml', 'examples/orders-usd-ts.yaml']);
  expect(valid.stdout).toContain('Spec examples/orders-usd.yaml is valid offline');
  expect(valid.stdout).toContain('Spec examples/orders-usd-ts.yaml is valid offline');
  for (const spec of ['examples/orders-usd.yaml', 'examples/orders-usd-ts.yaml']) {
    const { stdout } = await backfill(['plan', spec, '-o', 'json'], { DEMO_DATABASE_URL: db.url });
    const plan = JSON.parse(stdout) as { partitions: unknown[] };
    expect(plan.partitions.length).toBe(9); // 200 hours from 2024-01-01 01:00: nine days
  }
}, 120_000);

test('the installed worker starts against Temporal and PostgreSQL, and drains on SIGTERM', async () => {
  const worker = spawn(path.join(prefix, 'bin', 'backfill'), ['worker'], {
    cwd: elsewhere,
    env: { ...userEnv, LOG_LEVEL: 'info', TEMPORAL_ADDRESS: temporalAddress(), DATABASE_URL: db.url, BACKFILL_TASK_QUEUE: uniqueName('install-queue') },
  });
  try {
    await outputOf(worker).until('worker started', 60_000);
    worker.kill('SIGTERM');
    expect(await exited(worker)).toBe(0);
  } finally {
    worker.kill('SIGKILL');
  }
}, 90_000);

test('the installed dev command brings up Temporal and an embedded PostgreSQL, and stops on Ctrl-C', async () => {
  const temporalPort = await freePort();
  const pgPort = await freePort();
  const dev = spawn(path.join(prefix, 'bin', 'backfill'), ['dev'], {
    cwd: elsewhere,
    // the Temporal CLI this machine already built (an empty HOME has no cache); ports of its own
    env: {
      ...userEnv,
      TEMPORAL_CLI: cachedCliPath(),
      TEMPORAL_ADDRESS: `127.0.0.1:${temporalPort}`,
      TEMPORAL_UI_PORT: String(await freePort()),
      BACKFILL_PG_PORT: String(pgPort),
    },
  });
  try {
    const said = await outputOf(dev).until('Press Ctrl-C to stop.', 180_000);
    expect(said).toMatch(/Web UI: +http:\/\/127\.0\.0\.1:\d+/);
    expect(said).toMatch(/export DATABASE_URL=postgres/);
    expect(await portOpen(temporalPort)).toBe(true);
    expect(await portOpen(pgPort)).toBe(true);
    // Ctrl-C once up: dev stops what it started, in order, and exits 0, embedded PostgreSQL or not
    dev.kill('SIGINT');
    expect(await exited(dev)).toBe(0);
    expect(await portOpen(temporalPort)).toBe(false);
    expect(await portOpen(pgPort)).toBe(false);
  } finally {
    dev.kill('SIGKILL');
  }
}, 240_000);
