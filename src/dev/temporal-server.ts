/**
 * Starts the Temporal dev server (`temporal server start-dev`) as a child process with
 * the project's search attributes, and waits until it answers (stopping it if it never
 * does). Used by `backfill dev`,
 * `backfill demo` and the tests' global setup, so all three run the same server.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { Connection } from '@temporalio/client';
import { pollUntil } from '../util/poll-until';
import { stopOnExit } from './shutdown';
import { StartupOutput } from './startup-output';
import { ExitedWhileStarting, freePort, onFreshPorts } from './free-port';

export { ExitedWhileStarting, freePort };
import { SEARCH_ATTRIBUTES } from '../workflows/search-attributes';

export interface DevServerOptions {
  cliPath: string;
  /** Omitted: a free port, chosen again if the server could not start on it. */
  port?: number;
  /** Web UI port; null runs headless, 'any' a free port, omitted the server's port + 1000. */
  uiPort?: number | null | 'any';
  /** How a free port is found (default: the operating system picks one). */
  choosePort?: () => Promise<number>;
  /** A persistent SQLite file; omitted = in memory. */
  dbFile?: string;
  namespace?: string;
  extraArgs?: string[];
  logLevel?: 'debug' | 'info' | 'warn' | 'error';
  /** Progress while the server starts (every 10 s), so a slow first start does not look hung. */
  say?: (line: string) => void;
  /** Give up after this long even though the process is alive (default 10 minutes). */
  readyTimeoutMs?: number;
}

export interface DevServer {
  address: string;
  uiUrl?: string;
  process: ChildProcess;
  stop(): Promise<void>;
}

const TYPE_NAMES: Record<string, string> = {
  KEYWORD: 'Keyword',
  INT: 'Int',
  TEXT: 'Text',
  BOOL: 'Bool',
  DOUBLE: 'Double',
  DATETIME: 'Datetime',
  KEYWORD_LIST: 'KeywordList',
};

/**
 * Starts on the ports given, or on free ones. Ports this function chooses can be taken by
 * another process between the choice and the server's bind (a busy machine opens connections
 * from the same range), so a server that exits while starting on ports of its own choosing is
 * started again on fresh ones; ports the caller fixed are the caller's to change.
 */
export async function startDevServer(options: DevServerOptions): Promise<DevServer> {
  const portsAreOurs = options.port === undefined && typeof options.uiPort !== 'number';
  const choosePort = options.choosePort ?? freePort;
  return onFreshPorts(
    async () => {
      const port = options.port ?? (await choosePort());
      const uiPort = options.uiPort === 'any' ? await choosePort() : options.uiPort === undefined ? port + 1000 : options.uiPort;
      return startOnce(options, port, uiPort);
    },
    { portsAreOurs, say: options.say && ((line) => options.say!(`Temporal: ${line}`)), again: 'starting it again on other ports' },
  );
}

async function startOnce(options: DevServerOptions, port: number, uiPort: number | null): Promise<DevServer> {
  const args = ['server', 'start-dev', '--ip', '127.0.0.1', '--port', String(port), '--log-level', options.logLevel ?? 'warn'];
  args.push('--namespace', options.namespace ?? 'default');
  if (options.dbFile) {
    mkdirSync(path.dirname(options.dbFile), { recursive: true });
    args.push('--db-filename', options.dbFile);
  }
  if (uiPort === null) args.push('--headless');
  else args.push('--ui-port', String(uiPort));
  for (const key of SEARCH_ATTRIBUTES) args.push('--search-attribute', `${key.name}=${TYPE_NAMES[key.type]}`);
  args.push(...(options.extraArgs ?? []));

  const child = spawn(options.cliPath, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  const stderr = new StartupOutput();
  child.stderr!.on('data', (d: Buffer) => stderr.add(d.toString()));
  const exited = new Promise<never>((_, reject) =>
    child.once('exit', (code, signal) =>
      reject(new ExitedWhileStarting(`the dev server on port ${port} exited with ${code ?? signal} while starting: ${stderr.reason()}`)),
    ),
  );
  exited.catch(() => undefined); // raced below; a later exit (our own stop) is no error
  const address = `127.0.0.1:${port}`;
  const kill = () =>
    new Promise<void>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve();
      child.once('exit', () => resolve());
      child.kill('SIGTERM');
      setTimeout(() => child.kill('SIGKILL'), 10_000).unref();
    });
  // from its first moment: a command interrupted while the server starts stops it too
  const unregister = stopOnExit(kill);
  const stop = async () => {
    await kill();
    unregister();
  };
  // ready is what the server says: its frontend answers for the namespace. While the process
  // lives it is still starting (a first start creates its database and registers the search
  // attributes); only a process that exits, or a very long start, is a failure
  const started = Date.now();
  const progress = setInterval(() => options.say?.(`Temporal: still starting (${Math.round((Date.now() - started) / 1000)} s)…`), 10_000);
  try {
    const alive = () => child.exitCode === null && child.signalCode === null;
    await Promise.race([waitForServer(address, options.namespace ?? 'default', options.readyTimeoutMs ?? 10 * 60_000, alive), exited]);
  } catch (err) {
    await stop();
    throw err;
  } finally {
    clearInterval(progress);
  }
  return {
    address,
    uiUrl: uiPort === null ? undefined : `http://127.0.0.1:${uiPort}`,
    process: child,
    stop,
  };
}

/** True when a Temporal frontend answers at the address. */
export async function isServerUp(address: string, namespace = 'default'): Promise<boolean> {
  // nothing listening (a first `demo` or `dev`) is known at once; only a port that accepts gets
  // the two seconds a server still starting may need to answer
  if (await refusesConnections(address)) return false;
  try {
    await waitForServer(address, namespace, 2_000);
    return true;
  } catch {
    return false;
  }
}

/** Whether `host:port` refuses a TCP connection outright: nothing listens there. */
function refusesConnections(address: string): Promise<boolean> {
  const at = address.lastIndexOf(':');
  const [host, port] = [address.slice(0, at).replace(/^\[|\]$/g, ''), Number(address.slice(at + 1))];
  return new Promise((resolve) => {
    const socket = net.connect({ host, port, timeout: 2_000 });
    const done = (refused: boolean) => {
      socket.destroy();
      resolve(refused);
    };
    socket.once('connect', () => done(false));
    socket.once('timeout', () => done(false));
    socket.once('error', (err: NodeJS.ErrnoException) => done(err.code === 'ECONNREFUSED'));
  });
}

async function waitForServer(address: string, namespace: string, timeoutMs: number, alive: () => boolean = () => true): Promise<void> {
  const answered = await untilAnswers(address, (c) => c.workflowService.describeNamespace({ namespace }), timeoutMs, alive);
  if (!answered.ok) throw new Error(`Temporal at ${address} did not answer within ${timeoutMs / 1000}s: ${(answered.last as Error)?.message}`);
}

/**
 * Asks a Temporal frontend `ask` until it answers: ok, or why not — the process died (`alive`
 * says false, no point waiting) or the time ran out (`last` is the latest refusal).
 */
export async function untilAnswers(
  address: string,
  ask: (connection: Connection) => Promise<unknown>,
  timeoutMs: number,
  alive: () => boolean = () => true,
): Promise<{ ok: true } | { ok: false; exited: boolean; last: unknown }> {
  let last: unknown;
  const up = await pollUntil(
    async () => {
      if (!alive()) return false; // the process is gone: stop asking
      try {
        const connection = await Connection.connect({ address, connectTimeout: 1000 });
        try {
          await ask(connection);
          return true;
        } finally {
          await connection.close();
        }
      } catch (err) {
        last = err;
        return undefined;
      }
    },
    { timeoutMs, intervalMs: 250 },
  );
  return up ? { ok: true } : { ok: false, exited: up === false, last };
}
