/**
 * Operator-facing spec errors: what is wrong, the value, where (file:line and field
 * path) and what to do. A SpecError is a usage error: the CLI exits with code 2 and
 * nothing has been written.
 */
export interface SpecProblem {
  /** Dotted field path, e.g. `partition.size`; empty for whole-file problems. */
  path: string;
  message: string;
  line?: number;
  column?: number;
}

export class SpecError extends Error {
  constructor(
    readonly file: string,
    readonly problems: SpecProblem[],
  ) {
    super(problems.map((p) => formatProblem(file, p)).join('\n'));
    this.name = 'SpecError';
  }
}

export function formatProblem(file: string, p: SpecProblem): string {
  const where = p.line ? `${file}:${p.line}:${p.column ?? 1}` : file;
  return `invalid spec ${where}: ${p.path ? `${p.path} ` : ''}${p.message}`;
}
