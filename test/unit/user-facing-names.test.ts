/**
 * What users read names only what users have: no internal notes, tools or paths of the
 * machines this project is built on, in the README, docs/, examples/, or any source, benchmark
 * or script file (their comments and messages ship in the package and the repository).
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';

const ROOT = path.join(__dirname, '..', '..');

/** Names of things that exist only where this project is developed, never on a user's machine. */
const INTERNAL = [
  /PERF-NOTES/,
  /TEMPORAL-NOTES/,
  /\bDESIGN\.md\b/,
  /\bSTYLE\.md\b/,
  /farm-bench/,
  /farm-studio/,
  /\.\.\/shared\/(?:[A-Z]|hooks)/,
  /\/work\/(main|audit|ci\d)/,
  // outside the clone npx fetches the registry's unrelated package of that name: bin/backfill, or backfill once linked
  /npx backfill\b/,
];

function filesUnder(dir: string, keep: (file: string) => boolean): string[] {
  return readdirSync(dir).flatMap((name) => {
    const file = path.join(dir, name);
    if (statSync(file).isDirectory()) return name === 'node_modules' || name.startsWith('.') ? [] : filesUnder(file, keep);
    return keep(file) ? [file] : [];
  });
}

const READ = [
  path.join(ROOT, 'README.md'),
  ...filesUnder(path.join(ROOT, 'docs'), (f) => f.endsWith('.md')),
  ...filesUnder(path.join(ROOT, 'examples'), (f) => /\.(ya?ml|json|ts)$/.test(f)),
  ...['src', 'bench', 'scripts'].flatMap((d) => filesUnder(path.join(ROOT, d), (f) => f.endsWith('.ts'))),
];

test.each(READ.map((f) => [path.relative(ROOT, f)]))('%s names nothing users do not have', (file) => {
  const text = readFileSync(path.join(ROOT, file), 'utf8');
  const found = INTERNAL.filter((re) => re.test(text)).map(String);
  expect(found).toEqual([]);
});

test('the list catches what it is for', () => {
  for (const text of [
    'see ../shared/PERF-NOTES.md',
    'timed with farm-bench',
    'as DESIGN.md says',
    'cd /work/main && npm test',
    'npx backfill start spec.yaml',
  ]) {
    expect(INTERNAL.some((re) => re.test(text))).toBe(true);
  }
  expect(INTERNAL.some((re) => re.test("import { FailureType } from '../shared/failures';"))).toBe(false);
});
