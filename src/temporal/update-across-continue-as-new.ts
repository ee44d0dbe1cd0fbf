/**
 * An update sent while its workflow continues as new is aborted by the server before the
 * workflow sees it ("workflow update was aborted by closing workflow"); the next execution
 * takes it. Operators' updates (pause, resume, cancel, limits, approve) are sent again then,
 * a few times, instead of failing the command on a run that is merely starting its next
 * execution. An update the workflow accepted is never sent twice: only this refusal retries.
 *
 * Every update the client sends goes through `executeUpdate` or `startUpdate` here (lint
 * refuses the handle's own methods elsewhere in src/), so a new one cannot miss the retry.
 */
import { WorkflowNotFoundError, WorkflowUpdateStage, type UpdateDefinition, type WorkflowHandle, type WorkflowUpdateHandle } from '@temporalio/client';

const ATTEMPTS = 5;
const PAUSE_MS = 200;

/** Sends the update and waits for its result. */
export function executeUpdate<Ret, Arg, Name extends string>(handle: WorkflowHandle, update: UpdateDefinition<Ret, [Arg], Name>, arg: Arg): Promise<Ret> {
  // eslint-disable-next-line no-restricted-syntax -- the one place that sends updates
  return acrossContinueAsNew(() => handle.executeUpdate(update, { args: [arg] }));
}

/** Sends the update and resolves once the workflow accepted it (its validator passed). */
export function startUpdate<Ret, Arg, Name extends string>(
  handle: WorkflowHandle,
  update: UpdateDefinition<Ret, [Arg], Name>,
  arg: Arg,
): Promise<WorkflowUpdateHandle<Ret>> {
  // eslint-disable-next-line no-restricted-syntax -- the one place that sends updates
  return acrossContinueAsNew(() => handle.startUpdate(update, { args: [arg], waitForStage: WorkflowUpdateStage.ACCEPTED }));
}

async function acrossContinueAsNew<T>(send: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await send();
    } catch (err) {
      if (!abortedByContinueAsNew(err) || attempt >= ATTEMPTS) throw err;
      await new Promise((resolve) => setTimeout(resolve, PAUSE_MS * attempt));
    }
  }
}

export function abortedByContinueAsNew(err: unknown): boolean {
  return err instanceof WorkflowNotFoundError && /aborted by closing workflow/i.test(err.message);
}
