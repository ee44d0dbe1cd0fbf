/**
 * An update sent while its workflow continues as new is aborted by the server before the
 * workflow sees it ("workflow update was aborted by closing workflow"); the next execution
 * takes it. Operators' updates (pause, resume, cancel, limits, approve) are sent again then,
 * a few times, instead of failing the command on a run that is merely starting its next
 * execution. An update the workflow accepted is never sent twice: only this refusal retries.
 */
import { WorkflowNotFoundError } from '@temporalio/client';

const ATTEMPTS = 5;
const PAUSE_MS = 200;

export async function updateAcrossContinueAsNew<T>(send: () => Promise<T>): Promise<T> {
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
