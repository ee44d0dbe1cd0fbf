/**
 * What a server that died while starting said, kept so its cause survives: a Go panic ends in
 * a long stack whose last lines name only `main.main`, and PostgreSQL says FATAL after the line
 * that explains it, so the lines that say what went wrong (a panic, an error, a taken address)
 * are picked out of the start of the output, with the last ones.
 */
import { closeSync, existsSync, openSync, readSync, statSync } from 'node:fs';

export class StartupOutput {
  private head = '';
  private tail = '';

  add(text: string): void {
    if (this.head.length < 64_000) this.head += text;
    this.tail = (this.tail + text).slice(-2_000);
  }

  reason(): string {
    const lines = (s: string) =>
      s
        .split('\n')
        .map((l) => l.trim())
        .filter(Boolean);
    const telling = lines(this.head)
      .filter((l) => /^panic:|address already in use|\b(error|fatal)\b/i.test(l))
      .slice(0, 3);
    const last = lines(this.tail).slice(-2);
    const picked = [...new Set([...telling, ...last])];
    return picked.length > 0 ? picked.join(' | ') : 'it printed nothing';
  }
}

/** Where a log file ends now: what a process started after this writes to it begins there. */
export function logEnd(file: string): number {
  return existsSync(file) ? statSync(file).size : 0;
}

/** What a process wrote to a log file from `offset` on (the first 64 kB of it, for `reason`). */
export function outputSince(file: string, offset: number): StartupOutput {
  const output = new StartupOutput();
  if (!existsSync(file)) return output;
  const fd = openSync(file, 'r');
  try {
    const buffer = Buffer.alloc(Math.min(64_000, Math.max(0, statSync(file).size - offset)));
    output.add(buffer.subarray(0, readSync(fd, buffer, 0, buffer.length, offset)).toString());
  } finally {
    closeSync(fd);
  }
  return output;
}
