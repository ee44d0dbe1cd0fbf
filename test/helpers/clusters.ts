/**
 * Several PostgreSQL clusters for the routing and fleet tests: cluster-servers.ts runs them in a
 * process of its own; each is a separate cluster (its own system identifier), as the databases
 * of a fleet are.
 */
import path from 'node:path';
import { startServerProcess } from './server-process';

export interface Clusters {
  /** Each cluster's maintenance database URL (superuser). */
  urls: string[];
  /** Stops cluster `i` (a fast shutdown: its connections are cut), keeping its data. */
  stopCluster(i: number): Promise<void>;
  /** Starts cluster `i` again, on its port, from its data. */
  startCluster(i: number): Promise<void>;
  stop(): Promise<void>;
}

export async function startClusters(count: number): Promise<Clusters> {
  const server = await startServerProcess<{ urls: string[] }>(path.join(__dirname, 'cluster-servers.ts'), [String(count)]);
  return {
    urls: server.value.urls,
    stopCluster: (i) => server.command(`stop ${i}`),
    startCluster: (i) => server.command(`start ${i}`),
    stop: server.stop,
  };
}
