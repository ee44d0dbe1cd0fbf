/**
 * The operations layer: what an operator can do with backfills, as plain async functions
 * over a Temporal client and a ledger pool. The CLI, the demo, the tests and the
 * benchmarks all go through these; none of them talks to workflows or the ledger directly.
 */
export { defaultActor } from './actor';
export { checkSpec, type CheckedSpec } from './check-spec';
export { approveRun, controlRun, setRunLimits, type ControlAction } from './control';
export { UsageError } from '../domain/usage-error';
export { followRun, type RunSnapshot } from './follow';
export { findRun, openLedgerPool } from './ledger-access';
export { retryFailed, type RetryStarted } from './retry-failed';
export { waitForResult } from './run-workflow';
export { newRunId } from './run-id';
export { startRun, type StartedRun, type StartRunOptions } from './start-run';
export { listRunSummaries, statusReport, statusReportFor, type StatusReport } from './status';
export { verifyRun, type VerifyReport } from './verify-run';
