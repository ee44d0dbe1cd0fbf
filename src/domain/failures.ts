/**
 * Failure types carried by ApplicationFailure.type. Workflows and the CLI match on these
 * strings, so they are part of the contract: rename one and old histories change meaning.
 */
export const FailureType = {
  /** A row made the transform or the write fail (SQLSTATE 22/23/42, or a TS transform threw): not retried. */
  DataError: 'BackfillDataError',
  /** The worker's transform differs from the one the run froze: not retried; deploy the right code. */
  TransformChanged: 'BackfillTransformChanged',
  /** Another run of the same spec name is active. */
  RunAlreadyActive: 'BackfillRunAlreadyActive',
  /** The spec no longer matches the database (a table or column went away). */
  SpecInvalid: 'BackfillSpecInvalid',
  /**
   * This worker's variable points at another database than the run's: retried, so a worker
   * connected to the right one takes the work; never written here.
   */
  WrongDatabase: 'BackfillWrongDatabase',
  /**
   * The database refused an activity's statement in a way no retry changes (a missing column,
   * a type it cannot compare, a constraint): not retried, carried by the failure's own
   * nonRetryable flag (activities/refused-at-once.ts).
   */
  DatabaseRefused: 'BackfillDatabaseRefused',
  /** The run ended failed; its RunResult is the failure's first detail (the execution shows Failed). */
  RunFailed: 'BackfillRunFailed',
  /** A fleet ended failed or with members not started; its FleetResult is the failure's first detail. */
  FleetFailed: 'BackfillFleetFailed',
  /** The partition was failed by the ledger (recorded there); used by the partition workflow. */
  PartitionFailed: 'BackfillPartitionFailed',
} as const;
export type FailureType = (typeof FailureType)[keyof typeof FailureType];

export const NON_RETRYABLE_FAILURES: string[] = [FailureType.DataError, FailureType.TransformChanged, FailureType.RunAlreadyActive, FailureType.SpecInvalid];
