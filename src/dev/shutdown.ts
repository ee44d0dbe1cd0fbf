/**
 * `dev` and `demo` start processes of their own (the Temporal dev server, PostgreSQL). Whatever
 * ends the command — Ctrl-C or SIGTERM at any stage, a failure, an error thrown where nothing
 * catches it (a library's child process failing to spawn) — those processes are stopped first,
 * and the command says what happened in one line, never with a stack trace.
 */
const cleanups: (() => Promise<void>)[] = [];
let waiters: (() => void)[] = [];
let installed = false;
let stopping = false;

/** Registers a process to stop if the command ends abnormally; returns its unregistration. */
export function stopOnExit(stop: () => Promise<void>): () => void {
  cleanups.push(stop);
  return () => {
    const i = cleanups.indexOf(stop);
    if (i !== -1) cleanups.splice(i, 1);
  };
}

/** Resolves on Ctrl-C or SIGTERM, for a command that stays up until then and stops its services itself. */
export function untilInterrupted(): Promise<void> {
  return new Promise((resolve) => waiters.push(resolve));
}

async function stopAll(): Promise<void> {
  for (const stop of cleanups.splice(0).reverse()) await stop().catch(() => undefined);
}

/**
 * Stops what the command started, then exits with `code`. Asked again while stopping: a second
 * Ctrl-C (`force`) exits at once, as an impatient operator means; an error (a write to an output
 * that is gone, another failure) leaves the first request to finish, so that nothing is left
 * running.
 */
async function exitAfterCleanup(code: number, line?: string, options: { force?: boolean } = {}): Promise<void> {
  if (stopping && !options.force) return;
  if (line) process.stderr.write(`${line}\n`);
  if (!stopping) {
    stopping = true;
    await stopAll();
  }
  process.exit(code);
}

/**
 * The reader of the command's output went away (EPIPE: `backfill demo 2>&1 | head`). Like any
 * Unix tool the command ends, quietly and with 0; `dev` and `demo` first stop what they started.
 */
export function endForClosedOutput(): void {
  if (!installed) process.exit(0);
  void exitAfterCleanup(0);
}

/** Whether this process stops its services itself on Ctrl-C (`dev`, `demo`). */
export function shutdownHandlersInstalled(): boolean {
  return installed;
}

/** Installs the handlers (once per process). */
export function installShutdownHandlers(): void {
  if (installed) return;
  installed = true;
  const onSignal = (signal: NodeJS.Signals) => {
    if (waiters.length > 0) {
      // a command waiting for Ctrl-C: it stops its services and exits in order
      const ready = waiters;
      waiters = [];
      for (const resolve of ready) resolve();
      return;
    }
    void exitAfterCleanup(130, `\nbackfill: interrupted (${signal}); stopping what this command started…`, { force: true });
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  process.on('uncaughtException', (err) => void exitAfterCleanup(1, `backfill: ${describe(err)}`));
  process.on('unhandledRejection', (err) => void exitAfterCleanup(1, `backfill: ${describe(err)}`));
}

function describe(err: unknown): string {
  const e = err as NodeJS.ErrnoException;
  if (e?.code === 'EACCES' && e.path)
    return `cannot run ${e.path}: permission denied; if this is the embedded PostgreSQL under root, see "Two commands" in the README`;
  return e instanceof Error ? e.message : String(err);
}
