/**
 * The fleet's record (docs/fleets.md), as each member's run carries it into its ledger: plain
 * data that imports nothing, so the run's input and the fleet's can both name it.
 */

/** The fleet's own record, kept in every member's ledger when it registers (backfill.fleets). */
export interface FleetRecord {
  fleetId: string;
  name: string;
  reason: string;
  workflowId: string;
  fleetHash: string;
  startedBy: string;
  waves: number;
  concurrency: number;
  onError: 'stop' | 'continue';
  approve: boolean;
  /**
   * Every member and its wave, in start order (its run id and database identity are in its own
   * run's row). Kept short: every member's run carries it, so a fleet's history grows with the
   * square of its members.
   */
  members: { variable: string; wave: number }[];
  excluded: { variable: string; reason: string }[];
  /** `start --plan --approved-by`: who approved the fleet's plan. */
  approvedBy?: string;
}

/** What a member run carries of its fleet (BackfillRunInput.fleet). */
export interface FleetMembership {
  record: FleetRecord;
  member: string;
  wave: number;
  /** Who let this member's wave start (`fleet.approve`), when a person had to. */
  waveApprovedBy?: string;
}
