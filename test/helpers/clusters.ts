/**
 * Several PostgreSQL clusters for the routing and fleet tests: cluster-servers.ts runs them in a
 * process of its own; each is a separate cluster (its own system identifier), as the databases
 * of a fleet are.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';

export interface Clusters {
  /** Each cluster's maintenance database URL (superuser). */
  urls: string[];
  stop(): Promise<void>;
}

export async function startClusters(count: number): Promise<Clusters> {
  const tsx = path.join(__dirname, '..', '..', 'node_modules', '.bin', 'tsx');
  const child = spawn(tsx, [path.join(__dirname, 'cluster-servers.ts'), String(count)], { stdio: ['ignore', 'pipe', 'inherit'] });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const { urls } = await new Promise<{ urls: string[] }>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const line = out.split('\n').find((l) => l.startsWith('{'));
      if (line) resolve(JSON.parse(line));
    });
    void exited.then(() => reject(new Error('the clusters did not start (see stderr)')));
  });
  return {
    urls,
    async stop() {
      child.kill('SIGTERM');
      await exited;
    },
  };
}
