/** A fleet's result once its workflow ends: completed, failed (the result in the failure's details) or cancelled (in its memo). */
import { CancelledFailure, WorkflowFailedError, type WorkflowHandle } from '@temporalio/client';
import { FailureType } from '../domain/failures';
import type { FleetResult } from '../workflows/fleet/input';

export async function waitForFleet(handle: WorkflowHandle): Promise<FleetResult> {
  try {
    return (await handle.result()) as FleetResult;
  } catch (err) {
    if (!(err instanceof WorkflowFailedError)) throw err;
    const cause = err.cause as (Error & { type?: string; details?: unknown[] }) | undefined;
    if (cause?.type === FailureType.FleetFailed && cause.details?.[0]) return cause.details[0] as FleetResult;
    if (cause instanceof CancelledFailure) {
      const memo = (await handle.describe()).memo as { result?: FleetResult } | undefined;
      if (memo?.result) return memo.result;
    }
    throw err;
  }
}
