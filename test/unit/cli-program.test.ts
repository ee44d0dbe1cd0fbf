import { buildProgram, COMMANDS } from '../../src/cli/program';
import { HELP_GROUPS } from '../../src/cli/help';
import { engineVersion } from '../../src/util/engine-version';

test('backfill --version prints the engine version runs record, the SDK and Node.js versions, and every command is listed in --help', async () => {
  let out = '';
  const program = buildProgram().configureOutput({ writeOut: (s) => (out += s), writeErr: (s) => (out += s) });
  await expect(program.parseAsync(['node', 'backfill', '--version'])).rejects.toMatchObject({ code: 'commander.version' });
  const sdk = (require('@temporalio/client/package.json') as { version: string }).version;
  expect(out.trim().split('\n')).toEqual([engineVersion(), `Temporal TypeScript SDK ${sdk}`, `Node.js ${process.version}`]);
  expect(sdk).toMatch(/^1\.24\./);
  expect(engineVersion()).toMatch(/^backfill \d+\.\d+\.\d+/);
  const help = buildProgram().helpInformation();
  for (const c of buildProgram().commands) expect(help).toContain(c.name());
});

test('--help lists the commands in four groups, each command once, and every command shows examples in its own help', () => {
  const program = buildProgram();
  const help = program.helpInformation();
  const headings = ['Specs:', 'Runs:', 'Proof:', 'Infrastructure:'];
  expect(headings.map((h) => help.indexOf(`\n${h}\n`))).toEqual([...headings.map((h) => help.indexOf(`\n${h}\n`))].sort((a, b) => a - b));
  expect(headings.every((h) => help.includes(`\n${h}\n`))).toBe(true);
  const ungrouped = program.commands.filter((c) => !headings.includes(c.helpGroup())).map((c) => c.name());
  expect(ungrouped).toEqual([]);
  const withoutExamples = program.commands
    .filter((c) => {
      let out = '';
      c.configureOutput({ writeOut: (s) => (out += s) }).outputHelp();
      return !/\nExamples:\n {2}backfill /.test(out) && !/\nExamples:\n {2}[A-Z_]+=\S+ backfill /.test(out);
    })
    .map((c) => c.name());
  expect(withoutExamples).toEqual([]);
});

test('each command is found under its own name, alone, as `backfill <command>` builds it, and every one is in a help group', () => {
  for (const [name, load] of Object.entries(COMMANDS)) {
    expect(load().command().name()).toBe(name);
    expect(buildProgram({ only: name }).commands.map((c) => c.name())).toEqual([name]);
  }
  const grouped = HELP_GROUPS.flatMap((g) => g.commands);
  expect([...grouped].sort()).toEqual([...Object.keys(COMMANDS), 'completion'].sort());
});
