/**
 * The lint rule that keeps the ledger's SQL in src/ledger, run as `npm run lint` runs it:
 * a statement on backfill.* anywhere else fails lint, naming where it belongs.
 */
import { execFile } from 'node:child_process';
import path from 'node:path';

const ROOT = path.join(__dirname, '..', '..');

function lint(file: string, code: string): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const child = execFile(
      path.join(ROOT, 'node_modules', '.bin', 'eslint'),
      ['--format', 'json', '--stdin', '--stdin-filename', path.join(ROOT, file)],
      { cwd: ROOT },
      (err, stdout) => {
        try {
          resolve((JSON.parse(stdout) as { messages: { message: string }[] }[])[0].messages.map((m) => m.message));
        } catch {
          reject(err ?? new Error(`eslint printed no report: ${stdout}`));
        }
      },
    );
    child.stdin!.end(code);
  });
}

const OUTSIDE = `import type pg from 'pg';
export async function f(pool: pg.Pool, runId: string, at: string): Promise<void> {
  await pool.query('SELECT status FROM backfill.runs WHERE run_id = $1', [runId]);
  await pool.query(\`UPDATE backfill.partitions SET hold_reason = NULL WHERE run_id = $1 AND at > \${at}\`, [runId]);
}
`;

test('SQL on a ledger table outside src/ledger fails lint, in a string and in a template', async () => {
  expect(await lint('src/operations/ledger-boundary-probe.ts', OUTSIDE)).toEqual([
    'SQL on the ledger (backfill.*) belongs in src/ledger: add or reuse a named function there',
    'SQL on the ledger (backfill.*) belongs in src/ledger: add or reuse a named function there',
  ]);
});

test('the same SQL inside src/ledger passes', async () => {
  expect(await lint('src/ledger/ledger-boundary-probe.ts', OUTSIDE)).toEqual([]);
});
