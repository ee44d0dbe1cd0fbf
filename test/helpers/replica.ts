/**
 * A real streaming replica for the replication-lag guard: replica-server.ts runs an embedded
 * PostgreSQL primary and a physical standby. Replay paused on the standby makes
 * `pg_stat_replication.replay_lag` on the primary grow while the primary writes: replication
 * lag, without a slow network.
 */
import path from 'node:path';
import pg from 'pg';
import { startServerProcess } from './server-process';

export interface PrimaryWithReplica {
  primaryUrl: string;
  replicaUrl: string;
  pauseReplay(): Promise<void>;
  resumeReplay(): Promise<void>;
  stop(): Promise<void>;
}

export async function startPrimaryWithReplica(): Promise<PrimaryWithReplica> {
  const server = await startServerProcess<{ primaryUrl: string; replicaUrl: string }>(path.join(__dirname, 'replica-server.ts'));
  const urls = server.value;
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
    stop: server.stop,
  };
}
