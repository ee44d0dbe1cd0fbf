/**
 * The package's entry: Backfill as a library. `openBackfill` does what the `backfill` command
 * does, as typed functions (the CLI is built on it); `createWorker` starts a worker inside a
 * program of your own; `defineTransform` types a TypeScript transform. docs/library.md.
 */
export {
  openBackfill,
  type Backfill,
  type BackfillOptions,
  type ControlOutcome,
  type RevertOptions,
  type RunRef,
  type Started,
  type StartOptions,
} from './api/backfill';
export type { RetriedFleet, StartedFleetInfo } from './api/fleet-api';
export type { FleetMemberStatus, FleetStatusReport } from './fleet/fleet-status-report';
export type { FleetMemberVerify, FleetVerifyReport } from './fleet/verify-fleet';
export type { FleetAction } from './fleet/fleet-control';
export type { FleetRetryStarted } from './fleet/retry-fleet';
export type { FleetRevertOptions, FleetRevertStarted } from './fleet/revert-fleet';
export type { FleetResult, MemberOutcome } from './workflows/fleet/input';
export type { RunEvent, RunEventOptions } from './api/run-events';
export type { PlanOptions, SpecPlan } from './operations/plan-spec';
export type { GuardCalibration, MeasuredGuard } from './preflight/guard-calibration';
export type { PartitionRevertPreview, RevertPreview } from './undo/revert-preview';
export type { StatusReport } from './operations/status';
export type { ReportData } from './report/collect';
export { UsageError } from './domain/usage-error';
export { createWorker, runWorker, type BackfillWorkerOptions, type RunningWorker } from './worker';
export { defineTransform, type TransformModule } from './transforms/define';
export { loadSpecFile, type LoadedSpec } from './specs/load';
export type { Spec } from './specs/schema';
export type { RunStatus, PartitionStatus } from './domain/statuses';
export type { RunResult } from './workflows/run/input';
