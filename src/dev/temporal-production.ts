/**
 * The Temporal server as production runs it — PostgreSQL persistence and SQL visibility — from
 * the binaries temporal-server-build.ts makes: it reads deploy/dynamicconfig (the file compose
 * mounts), so what is tested is what is deployed. It runs as one process, or as its four
 * services in four processes, each of which can be killed and started again while a run is in
 * flight; and the namespace is made by the admin step a cluster needs.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { stringify } from 'yaml';
import { Connection } from '@temporalio/client';
import { pollUntil } from '../util/poll-until';
import { projectRoot } from './paths';
import { ensureTemporalCli } from './temporal-cli';
import { ExitedWhileStarting, freePort, freePortBetween, onFreshPorts } from './free-port';
import { logEnd, outputSince } from './startup-output';
import { untilAnswers } from './temporal-server';
import { stopOnExit } from './shutdown';
import { ensureTemporalServer, postgresAccess, setupTemporalDatabases, type PostgresAccess, type ServerBinaries } from './temporal-server-build';

const run = promisify(execFile);

export const SERVICES = ['frontend', 'history', 'matching', 'worker'] as const;
export type ServiceName = (typeof SERVICES)[number];

export interface ProductionServerOptions {
  binaries: ServerBinaries;
  pg: PostgresAccess;
  databases: { main: string; visibility: string };
  /** Where the config and logs go. */
  root: string;
  /** One process for all services (default), or one process per service. */
  split?: boolean;
  numHistoryShards?: number;
  say?: (line: string) => void;
  /** How a free port is found (default: the operating system picks one). */
  choosePort?: () => Promise<number>;
}

export interface ProductionServer {
  address: string;
  /** Kills (SIGKILL) one service's process, or all of them. */
  kill(service?: ServiceName): Promise<void>;
  /** Starts what kill stopped, with the same config and databases. */
  start(service?: ServiceName): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Writes the config, starts the server's processes and waits until its frontend answers. Its
 * ports are found free, and another process can take one before the server binds it: a server
 * that says so while starting is started again on fresh ones (free-port.ts).
 */
export async function startProductionServer(options: ProductionServerOptions): Promise<ProductionServer> {
  return onFreshPorts(() => startOnFreshPorts(options), {
    portsAreOurs: true,
    say: options.say && ((line) => options.say!(`Temporal: ${line}`)),
    again: 'starting it again on other ports',
  });
}

async function startOnFreshPorts(options: ProductionServerOptions): Promise<ProductionServer> {
  const ports = await allocatePorts(options.choosePort ?? freePort);
  const logFile = path.join(options.root, 'server.log');
  const logStart = logEnd(logFile);
  const configDir = path.join(options.root, 'config');
  mkdirSync(configDir, { recursive: true });
  writeFileSync(path.join(configDir, 'production.yaml'), stringify(serverConfig(options, ports)));
  const address = `127.0.0.1:${ports.frontend.grpc}`;
  const groups: (ServiceName | 'all')[] = options.split ? [...SERVICES] : ['all'];
  const processes = new Map<ServiceName | 'all', ChildProcess>();

  const launch = (group: ServiceName | 'all') => {
    const args = ['--root', options.root, '--config', 'config', '--env', 'production', '--allow-no-auth', 'start'];
    if (group !== 'all') args.push('--service', group);
    const child = spawn(options.binaries.server, args, { cwd: options.root, stdio: ['ignore', 'ignore', 'ignore'] });
    processes.set(group, child);
  };
  const kill = async (service?: ServiceName) => {
    const which = service ? [options.split ? service : 'all'] : [...processes.keys()];
    await Promise.all(
      which.map(
        (g) =>
          new Promise<void>((resolve) => {
            const child = processes.get(g as ServiceName | 'all');
            if (!child || child.exitCode !== null || child.signalCode !== null) return resolve();
            child.once('exit', () => resolve());
            child.kill('SIGKILL');
          }),
      ),
    );
  };
  const unregister = stopOnExit(() => kill());
  const allAlive = () => [...processes.values()].every((c) => c.exitCode === null && c.signalCode === null);
  try {
    // on fresh databases the first process to start writes the cluster metadata; four at once
    // race on it (a duplicate key) and the losers exit: the frontend goes first, alone
    launch(groups[0]);
    await waitForFrontend(address, allAlive, options.root);
    for (const g of groups.slice(1)) launch(g);
    await waitForFrontend(address, allAlive, options.root);
  } catch (err) {
    await kill();
    unregister();
    const said = outputSince(logFile, logStart).reason();
    if (/address already in use/i.test(said)) throw new ExitedWhileStarting(`${(err as Error).message}: ${said}`);
    throw err;
  }
  const server: ProductionServer = {
    address,
    kill,
    async start(service) {
      for (const g of service ? [options.split ? service : 'all'] : groups) {
        const child = processes.get(g as ServiceName | 'all');
        if (!child || child.exitCode !== null || child.signalCode !== null) launch(g as ServiceName | 'all');
      }
      await waitForFrontend(address, () => true, options.root);
    },
    async stop() {
      await kill();
      unregister();
    },
  };
  return server;
}

/** Until the frontend answers (the history shards are owned by then); an exited process is a failure at once. */
async function waitForFrontend(address: string, alive: () => boolean, root: string, timeoutMs = 120_000): Promise<void> {
  const answered = await untilAnswers(address, (c) => c.workflowService.getSystemInfo({}), timeoutMs, alive);
  if (answered.ok) return;
  const why = answered.exited ? 'exited' : `did not answer within ${timeoutMs / 1000} s (${(answered.last as Error)?.message})`;
  throw new Error(`the Temporal server at ${address} ${why}; its log: ${path.join(root, 'server.log')}`);
}

/**
 * A namespace as an admin makes one (`temporal operator namespace create`, with a retention),
 * retried while the server is still coming up, then waited for until the frontend serves it.
 */
export async function createNamespace(cliPath: string, address: string, namespace: string, retention = '72h'): Promise<void> {
  let last: unknown;
  const created = await pollUntil(
    async () => {
      try {
        await run(cliPath, ['operator', 'namespace', 'create', '--address', address, '--namespace', namespace, '--retention', retention]);
        return true;
      } catch (err) {
        if (/already (registered|exists)/i.test(String((err as { stderr?: string }).stderr))) return true;
        last = err;
        return undefined;
      }
    },
    { timeoutMs: 60_000, intervalMs: 1000 },
  );
  if (!created) throw new Error(`could not create namespace ${namespace} at ${address}: ${String((last as { stderr?: string })?.stderr ?? last)}`);
  const connection = await Connection.connect({ address });
  try {
    const served = await pollUntil(
      () =>
        connection.workflowService
          .listWorkflowExecutions({ namespace, pageSize: 1 })
          .then(() => true)
          .catch(() => undefined),
      { timeoutMs: 60_000, intervalMs: 250 },
    );
    if (!served) throw new Error(`namespace ${namespace} was created at ${address} but not served within 60 s`);
  } finally {
    await connection.close();
  }
}

interface Ports {
  frontend: { grpc: number; membership: number; http: number };
  history: { grpc: number; membership: number };
  matching: { grpc: number; membership: number };
  worker: { grpc: number; membership: number };
  metrics: number;
  pprof: number;
}

async function allocatePorts(choosePort: () => Promise<number>): Promise<Ports> {
  // membership ports land in a smallint column (cluster_membership.rpc_port): below 32768
  const pair = async () => ({ grpc: await choosePort(), membership: await freeLowPort() });
  return {
    frontend: { ...(await pair()), http: await choosePort() },
    history: await pair(),
    matching: await pair(),
    worker: await pair(),
    metrics: await choosePort(),
    pprof: await choosePort(),
  };
}

/** A free port under 32768 (the column's limit; below the usual range of outgoing connections' ports too). */
async function freeLowPort(): Promise<number> {
  const port = await freePortBetween(20_000, 32_000, 50);
  if (port === undefined) throw new Error('no free port between 20000 and 32000 for the Temporal server’s membership');
  return port;
}

/** The module's config/development-postgres12.yaml, with our ports, databases and compose's dynamic config. */
function serverConfig(options: ProductionServerOptions, ports: Ports): unknown {
  const store = (databaseName: string, maxConns: number) => ({
    sql: {
      pluginName: 'postgres12',
      databaseName,
      connectAddr: `${options.pg.host}:${options.pg.port}`,
      connectProtocol: 'tcp',
      user: options.pg.user,
      password: options.pg.password ?? '',
      maxConns,
      maxIdleConns: maxConns,
      maxConnLifetime: '1h',
    },
  });
  const service = (p: { grpc: number; membership: number; http?: number }) => ({
    rpc: { grpcPort: p.grpc, membershipPort: p.membership, bindOnLocalHost: true, ...(p.http ? { httpPort: p.http } : {}) },
  });
  return {
    log: { stdout: false, level: 'warn', outputFile: path.join(options.root, 'server.log') },
    persistence: {
      defaultStore: 'postgres-default',
      visibilityStore: 'postgres-visibility',
      numHistoryShards: options.numHistoryShards ?? 4,
      datastores: { 'postgres-default': store(options.databases.main, 20), 'postgres-visibility': store(options.databases.visibility, 4) },
    },
    global: {
      membership: { maxJoinDuration: '30s', broadcastAddress: '127.0.0.1' },
      pprof: { port: ports.pprof },
      metrics: { prometheus: { framework: 'tally', timerType: 'histogram', listenAddress: `127.0.0.1:${ports.metrics}` } },
    },
    services: { frontend: service(ports.frontend), history: service(ports.history), matching: service(ports.matching), worker: service(ports.worker) },
    clusterMetadata: {
      enableGlobalNamespace: false,
      failoverVersionIncrement: 10,
      masterClusterName: 'active',
      currentClusterName: 'active',
      clusterInformation: { active: { enabled: true, initialFailoverVersion: 1, rpcName: 'frontend', rpcAddress: `127.0.0.1:${ports.frontend.grpc}` } },
    },
    dcRedirectionPolicy: { policy: 'noop' },
    dynamicConfigClient: { filepath: path.join(projectRoot(), 'deploy', 'dynamicconfig', 'development-sql.yaml'), pollInterval: '10s' },
  };
}

/**
 * All of it, as a deployment brings the server up: binaries (built if missing), the two
 * databases set up, the server started, the namespace made by the admin step.
 */
export async function bringUpProductionTemporal(options: {
  pgUrl: string;
  databases: { main: string; visibility: string };
  root: string;
  split?: boolean;
  namespace?: string;
  say?: (line: string) => void;
  choosePort?: () => Promise<number>;
}): Promise<ProductionServer> {
  const binaries = await ensureTemporalServer(options.say);
  const pg = postgresAccess(options.pgUrl);
  await setupTemporalDatabases(binaries, pg, options.databases);
  const server = await startProductionServer({
    binaries,
    pg,
    databases: options.databases,
    root: options.root,
    split: options.split,
    say: options.say,
    choosePort: options.choosePort,
  });
  try {
    await createNamespace(await ensureTemporalCli(options.say), server.address, options.namespace ?? 'default');
  } catch (err) {
    await server.stop();
    throw err;
  }
  return server;
}
