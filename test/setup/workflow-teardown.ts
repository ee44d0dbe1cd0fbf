import type { DevServer } from '../../src/dev/temporal-server';

export default async function workflowTeardown(): Promise<void> {
  await ((globalThis as Record<string, unknown>).__backfillWorkflowServer as DevServer | undefined)?.stop();
}
