/**
 * Settings a chunk's transaction runs under. A chunk never waits long for a lock: were it
 * to queue behind another session's lock, every application query after it would queue
 * too; it rolls back instead (SQLSTATE 55P03) and the partition holds and looks again.
 */
import type pg from 'pg';

export async function limitLockWaits(client: pg.PoolClient, ms: number): Promise<void> {
  await client.query(`SET LOCAL lock_timeout = ${Math.max(1, Math.round(ms))}`);
}
