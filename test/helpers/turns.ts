/**
 * How an integration file shares the machine. Files run two at a time; a file can say, at its
 * top, that it needs otherwise:
 *
 * - `runsAlone(reason)`: its assertions would not hold beside another file (test/setup/take-turns.ts
 *   then gives it the test server's turn lock exclusively, and test/setup/sequencer.js runs it last).
 * - `startsFirst(reason)`: it takes minutes, so the sequencer starts it before every other file and
 *   the rest fill the other slot around it, instead of it running on at the end with a slot idle.
 *
 * The sequencer reads both from the file's text (a line that starts with the call); `runsAlone` also
 * sets a flag the turn lock reads.
 */
const FLAG = '__backfillRunsAlone';

export function runsAlone(reason: string): void {
  (globalThis as Record<string, unknown>)[FLAG] = reason;
}

export function runsAloneBecause(): string | undefined {
  return (globalThis as Record<string, unknown>)[FLAG] as string | undefined;
}

/** Read by the sequencer only; the reason is for the reader. */
export function startsFirst(reason: string): void {
  void reason;
}
