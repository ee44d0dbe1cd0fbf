/**
 * The README and docs/ are what users read: every link in them resolves (files and headings),
 * the README stays a front page, and no lab notes leak in — dates of test runs, test files,
 * source paths, words about the machines and sessions this project is built in.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

const ROOT = path.join(__dirname, '..', '..');
const DOCS = path.join(ROOT, 'docs');
const USER_DOCS = [
  path.join(ROOT, 'README.md'),
  ...readdirSync(DOCS)
    .filter((f) => f.endsWith('.md'))
    .map((f) => path.join(DOCS, f)),
];
const rel = (file: string) => path.relative(ROOT, file);

/** GitHub's anchor for a heading: lowercase, punctuation dropped, spaces to hyphens. */
export function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

function anchorsOf(file: string): Set<string> {
  const text = readFileSync(file, 'utf8').replace(/```[\s\S]*?```/g, '');
  return new Set([...text.matchAll(/^#{1,6} (.+)$/gm)].map((m) => slug(m[1])));
}

/** Markdown links outside code blocks: [text](target). */
function linksOf(file: string): string[] {
  const text = readFileSync(file, 'utf8')
    .replace(/```[\s\S]*?```/g, '')
    .replace(/`[^`\n]*`/g, '');
  return [...text.matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1]);
}

test.each(USER_DOCS.map((f) => [rel(f)]))('every link in %s resolves', (file) => {
  const from = path.join(ROOT, file);
  const broken: string[] = [];
  for (const link of linksOf(from)) {
    if (/^(https?|mailto):/.test(link)) continue;
    const [target, anchor] = link.split('#');
    const resolved = target ? path.resolve(path.dirname(from), decodeURI(target)) : from;
    if (!existsSync(resolved)) broken.push(`${link}: no such file`);
    else if (anchor && resolved.endsWith('.md') && !anchorsOf(resolved).has(anchor)) broken.push(`${link}: no heading #${anchor}`);
  }
  expect(broken).toEqual([]);
});

/** Text that belongs in a lab notebook or the repository's internals, not in a user's guide. */
const LAB_NOTES: [string, RegExp][] = [
  ['a date of this project’s own runs', /\b202[5-9]-\d\d-\d\d\b/],
  ['a test file', /\.test\.ts\b|\btest\/[\w/.-]+/],
  ['a source path', /\bsrc\/[\w/.-]+/],
  ['a build path', /\bdist\/[\w/.-]+/],
  ['the machine it was measured on', /\bthis machine\b|\bon this box\b|\ba (second|third|fourth|fifth|sixth) machine\b/i],
  ['a working note', /\bthe issue'?s\b|\bthis session\b|\bstop \d+\b|\bTODO\b|\bFIXME\b/i],
  ['a compatibility promise about older names', /\bthe older name\b|\bolder form\b/i],
];

test.each(USER_DOCS.map((f) => [rel(f)]))('%s holds no lab notes', (file) => {
  const text = readFileSync(path.join(ROOT, file), 'utf8');
  const found = LAB_NOTES.flatMap(([what, re]) => {
    const m = re.exec(text);
    return m ? [`${what}: "${m[0]}"`] : [];
  });
  expect(found).toEqual([]);
});

test('the scan catches what it is for', () => {
  const caught = (text: string) => LAB_NOTES.some(([, re]) => re.test(text));
  for (const text of [
    'measured on 2026-12-03',
    'see test/chaos.test.ts',
    'defined in src/transforms/define.ts',
    'on a fifth machine',
    "the issue's bar",
    '(--format: the older name of -o)',
  ])
    expect(caught(text)).toBe(true);
  expect(caught('partitions such as day:2024-03-01 and `npm test`')).toBe(false);
});

test('the README is a front page: at most 250 lines, linking into docs/', () => {
  const readme = readFileSync(path.join(ROOT, 'README.md'), 'utf8');
  expect(readme.split('\n').length).toBeLessThanOrEqual(250);
  expect(readme).toContain('docs/getting-started.md');
});

test('slugs follow GitHub: punctuation dropped, spaces to hyphens', () => {
  expect(slug("Where the fleet's record lives")).toBe('where-the-fleets-record-lives');
  expect(slug('Help! My run is stuck')).toBe('help-my-run-is-stuck');
  expect(slug('`limits`')).toBe('limits');
});
