/**
 * Which database a connection reaches, as the database itself says: the cluster's system
 * identifier (fixed at initdb, different for every cluster, even one restored elsewhere from
 * the same image gets its own only if re-initialised) and the database's OID, with its name
 * for messages. Two workers whose DATABASE_URL point at staging and production, or at two
 * shards with the same tables, see different identities; a run records the one it was planned
 * against and no worker connected elsewhere does its work.
 */
import type pg from 'pg';

export interface DatabaseIdentity {
  /** `<system identifier>:<database oid>` */
  id: string;
  /** `<database name> on cluster <system identifier>`, for messages */
  label: string;
}

export async function databaseIdentity(db: pg.Pool | pg.PoolClient): Promise<DatabaseIdentity> {
  const { rows } = await db.query<{ sysid: string; oid: string; name: string }>(
    `SELECT s.system_identifier::text AS sysid, d.oid::text AS oid, d.datname AS name
       FROM pg_control_system() s, pg_database d WHERE d.datname = current_database()`,
  );
  const { sysid, oid, name } = rows[0];
  return { id: `${sysid}:${oid}`, label: `${name} on cluster ${sysid}` };
}
