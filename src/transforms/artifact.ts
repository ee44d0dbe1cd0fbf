/**
 * A TypeScript transform is frozen when its run starts: the module and everything it imports
 * are bundled (esbuild) into one CommonJS artifact, whose sha256 is the transform's code hash.
 * The run keeps the artifact in its ledger and every worker runs that artifact, never the file
 * on disk, so an edit of the module or of a helper it imports, a redeploy, or a worker on
 * another machine cannot change what a running backfill computes. Only Node's built-in
 * modules stay outside the artifact (they come with the worker's Node.js), and the package's
 * transform entry (`<package>/transform`), which the worker supplies: it only names the
 * contract, so a transform bundles the same whether or not its project installs the package.
 */
import { builtinModules, createRequire } from 'node:module';
import path from 'node:path';
import vm from 'node:vm';
import { buildSync, version as esbuildVersion, type Message } from 'esbuild';
import { sha256 } from '../util/hash';
import { packageName } from '../util/engine-version';
import { defineTransform, type TransformModule } from './define';

export interface TransformArtifact {
  /** sha256 of `code`: the transform's code hash, recorded with the run. */
  codeHash: string;
  /** The bundle: CommonJS, Node built-ins required at run time, everything else inside. */
  code: string;
  /** The files inside the bundle, relative to the module's directory, in bundle order. */
  inputs: string[];
  /** The Node built-in modules the bundle requires from the worker's Node.js. */
  builtins: string[];
  /** What built it, so a hash that differs after an upgrade can be explained. */
  bundler: string;
}

export class TransformBundleError extends Error {}

const BUILTINS = new Set(builtinModules);
const isBuiltin = (id: string) => id.startsWith('node:') || BUILTINS.has(id) || BUILTINS.has(id.split('/')[0]);
const transformEntry = () => `${packageName()}/transform`;

/**
 * Bundles the module at `modulePath`. Paths in the bundle are relative to the module's
 * directory, so the same sources give the same hash wherever the checkout lives.
 */
export function bundleTransform(modulePath: string): TransformArtifact {
  const dir = path.dirname(modulePath);
  let result;
  try {
    result = buildSync({
      entryPoints: [modulePath],
      absWorkingDir: dir,
      bundle: true,
      platform: 'node',
      format: 'cjs',
      target: 'node20',
      write: false,
      metafile: true,
      logLevel: 'silent',
      legalComments: 'none',
      charset: 'utf8',
      external: [transformEntry()],
    });
  } catch (err) {
    const errors = (err as { errors?: Message[] }).errors;
    throw new TransformBundleError(errors && errors.length > 0 ? errors.slice(0, 3).map(describeMessage).join('; ') : (err as Error).message);
  }
  const code = result.outputFiles[0].text;
  const builtins = new Set<string>();
  for (const output of Object.values(result.metafile.outputs)) {
    for (const imported of output.imports) if (imported.external && isBuiltin(imported.path)) builtins.add(imported.path);
  }
  return {
    codeHash: sha256(code),
    code,
    inputs: Object.keys(result.metafile.inputs),
    builtins: [...builtins].sort(),
    bundler: `esbuild ${esbuildVersion}`,
  };
}

function describeMessage(m: Message): string {
  return m.location ? `${m.location.file}:${m.location.line}:${m.location.column + 1}: ${m.text}` : m.text;
}

const evaluated = new Map<string, TransformModule>();

/**
 * Runs an artifact's code and returns its transform, once per code hash in this process.
 * The code is checked against its hash first: what runs is exactly what the run recorded.
 * `origin` names the module in stack traces and messages.
 */
export function evaluateArtifact(artifact: Pick<TransformArtifact, 'code' | 'codeHash'>, origin: string): TransformModule {
  const cached = evaluated.get(artifact.codeHash);
  if (cached) return cached;
  if (sha256(artifact.code) !== artifact.codeHash) {
    throw new TransformBundleError(`the stored artifact of ${origin} does not match its code hash ${artifact.codeHash.slice(0, 12)}; the ledger was edited`);
  }
  const filename = `${origin} (code ${artifact.codeHash.slice(0, 12)})`;
  const hostRequire = createRequire(path.resolve(origin));
  // the bundle holds every dependency: only Node's built-ins may be required from outside it
  const builtinOnly = (id: string) => {
    if (id === transformEntry()) return { defineTransform };
    if (!isBuiltin(id)) throw new TransformBundleError(`${origin} requires ${id} at run time, outside its bundle; import it statically so it is bundled`);
    return hostRequire(id);
  };
  const module = { exports: {} as Record<string, unknown> };
  const run = vm.compileFunction(artifact.code, ['exports', 'require', 'module', '__filename', '__dirname'], { filename });
  run(module.exports, builtinOnly, module, filename, path.dirname(path.resolve(origin)));
  const loaded = module.exports as { default?: unknown };
  const candidate = (loaded?.default ?? loaded) as Partial<TransformModule>;
  if (!candidate || typeof candidate.transform !== 'function' || !Array.isArray(candidate.columns)) {
    throw new TransformBundleError(`${origin} must default-export defineTransform({ columns: [...], transform(rows) { ... } })`);
  }
  evaluated.set(artifact.codeHash, candidate as TransformModule);
  return candidate as TransformModule;
}
