/**
 * A real streaming replica for the replication-lag guard: replica-server.ts runs an embedded
 * PostgreSQL primary and a physical standby. Replay paused on the standby makes
 * `pg_stat_replication.replay_lag` on the primary grow while the primary writes: replication
 * lag, without a slow network.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import pg from 'pg';

export interface PrimaryWithReplica {
  primaryUrl: string;
  replicaUrl: string;
  pauseReplay(): Promise<void>;
  resumeReplay(): Promise<void>;
  stop(): Promise<void>;
}

export async function startPrimaryWithReplica(): Promise<PrimaryWithReplica> {
  const tsx = path.join(__dirname, '..', '..', 'node_modules', '.bin', 'tsx');
  const child = spawn(tsx, [path.join(__dirname, 'replica-server.ts')], { stdio: ['ignore', 'pipe', 'inherit'] });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const urls = await new Promise<{ primaryUrl: string; replicaUrl: string }>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const line = out.split('\n').find((l) => l.startsWith('{'));
      if (line) resolve(JSON.parse(line));
    });
    void exited.then(() => reject(new Error('the primary/replica pair did not start (see stderr)')));
  });
  const onReplica = async (sql: string) => {
    const client = new pg.Client({ connectionString: urls.replicaUrl });
    await client.connect();
    try {
      await client.query(sql);
    } finally {
      await client.end();
    }
  };
  return {
    ...urls,
    pauseReplay: () => onReplica('SELECT pg_wal_replay_pause()'),
    resumeReplay: () => onReplica('SELECT pg_wal_replay_resume()'),
    async stop() {
      child.kill('SIGTERM');
      await exited;
    },
  };
}
