import { buildProgram } from '../../src/cli/program';
import { engineVersion } from '../../src/util/engine-version';

test('backfill --version prints the engine version runs record, and every command is listed in --help', async () => {
  let out = '';
  const program = buildProgram().configureOutput({ writeOut: (s) => (out += s), writeErr: (s) => (out += s) });
  await expect(program.parseAsync(['node', 'backfill', '--version'])).rejects.toMatchObject({ code: 'commander.version' });
  expect(out.trim()).toBe(engineVersion());
  expect(engineVersion()).toMatch(/^backfill \d+\.\d+\.\d+/);
  const help = buildProgram().helpInformation();
  for (const c of buildProgram().commands) expect(help).toContain(c.name());
});
