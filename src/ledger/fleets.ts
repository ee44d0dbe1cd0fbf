/**
 * The ledger's side of fleets (docs/fleets.md): each member's ledger keeps the fleet's record
 * (backfill.fleets) and marks its run with the fleet, its member name and wave, and who let the
 * wave start. A fleet is read back from whichever members' ledgers can be reached.
 */
import type { FleetMembership, FleetRecord } from '../workflows/fleet/record';
import type { Queryable } from './runs';

/** In the member run's registration transaction: the fleet's record (once per ledger), then the run's membership. */
export async function recordFleetMembership(db: Queryable, runId: string, membership: FleetMembership): Promise<void> {
  const r = membership.record;
  await db.query(
    `INSERT INTO backfill.fleets (fleet_id, name, reason, workflow_id, fleet_hash, started_by, waves, concurrency, on_error, approve, members, excluded, approved_by)
     VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13) ON CONFLICT (fleet_id) DO NOTHING`,
    [
      r.fleetId,
      r.name,
      r.reason,
      r.workflowId,
      r.fleetHash,
      r.startedBy,
      r.waves,
      r.concurrency,
      r.onError,
      r.approve,
      JSON.stringify(r.members),
      JSON.stringify(r.excluded),
      r.approvedBy ?? null,
    ],
  );
  await db.query('UPDATE backfill.runs SET fleet_id = $2, fleet_member = $3, fleet_wave = $4, wave_approved_by = $5 WHERE run_id = $1', [
    runId,
    r.fleetId,
    membership.member,
    membership.wave,
    membership.waveApprovedBy ?? null,
  ]);
}

export interface FleetRow {
  fleet_id: string;
  name: string;
  reason: string;
  workflow_id: string;
  fleet_hash: string;
  started_by: string;
  waves: number;
  concurrency: number;
  on_error: 'stop' | 'continue';
  approve: boolean;
  members: FleetRecord['members'];
  excluded: FleetRecord['excluded'];
  approved_by: string | null;
  created_at: Date;
}

/** The fleet's record as this ledger keeps it; undefined when none of its members ran here. */
export async function getFleet(db: Queryable, fleetId: string): Promise<FleetRow | undefined> {
  const exists = await db.query<{ t: string | null }>("SELECT to_regclass('backfill.fleets')::text AS t");
  if (exists.rows[0].t === null) return undefined;
  const { rows } = await db.query<FleetRow>('SELECT * FROM backfill.fleets WHERE fleet_id = $1', [fleetId]);
  return rows[0];
}

export interface FleetMemberRun {
  run_id: string;
  fleet_member: string;
  fleet_wave: number;
  wave_approved_by: string | null;
  status: string;
  partitions_total: number;
  /** Set on a revert of a member's run: the run it undoes. */
  reverts: string | null;
}

/** The runs this ledger holds for the fleet (a member's, and any retry or revert of it). */
export async function fleetRuns(db: Queryable, fleetId: string): Promise<FleetMemberRun[]> {
  const { rows } = await db.query<FleetMemberRun>(
    'SELECT run_id, fleet_member, fleet_wave, wave_approved_by, status, partitions_total, reverts FROM backfill.runs WHERE fleet_id = $1 ORDER BY created_at',
    [fleetId],
  );
  return rows;
}

/** The newest fleets this ledger keeps a record of (shell completion offers their ids); none before migration 16. */
export async function recentFleets(db: Queryable, limit = 20): Promise<Pick<FleetRow, 'fleet_id' | 'name'>[]> {
  const exists = await db.query<{ t: string | null }>("SELECT to_regclass('backfill.fleets')::text AS t");
  if (exists.rows[0].t === null) return [];
  const { rows } = await db.query<Pick<FleetRow, 'fleet_id' | 'name'>>('SELECT fleet_id, name FROM backfill.fleets ORDER BY created_at DESC LIMIT $1', [limit]);
  return rows;
}
