/**
 * The one deadline-polling loop of the operator side: asks `probe` every `intervalMs`
 * until it answers with a value or `timeoutMs` has passed. Used to wait for the ledger
 * to show what a workflow decided, and for servers to come up. Never used in workflows.
 */
export interface PollOptions {
  timeoutMs: number;
  intervalMs: number;
}

/** Resolves with the first value `probe` returns that is not undefined, or undefined at the deadline. */
export async function pollUntil<T>(probe: () => Promise<T | undefined>, options: PollOptions): Promise<T | undefined> {
  const deadline = Date.now() + options.timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() >= deadline) return undefined;
    await new Promise((resolve) => setTimeout(resolve, options.intervalMs));
  }
}
