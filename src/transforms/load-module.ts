/**
 * Loads a TypeScript or JavaScript transform module at runtime (tsx compiles .ts on the
 * fly, so operators deploy the spec's module file as is) and checks its shape.
 */
import { readFileSync } from 'node:fs';
import { sha256 } from '../specs/load';
import type { TransformModule } from './define';

export interface LoadedTransform {
  module: TransformModule;
  codeHash: string;
}

export function loadTransformModule(modulePath: string): LoadedTransform {
  const codeHash = sha256(readFileSync(modulePath));
  const loaded = requireTypeScript(modulePath);
  const candidate = ((loaded as { default?: unknown })?.default ?? loaded) as Partial<TransformModule>;
  if (!candidate || typeof candidate.transform !== 'function' || !Array.isArray(candidate.columns)) {
    throw new Error(
      `transform module ${modulePath} must default-export defineTransform({ columns: [...], transform(rows) { ... } })`,
    );
  }
  return { module: candidate as TransformModule, codeHash };
}

/**
 * tsx's scoped require compiles TypeScript without registering a global hook in the
 * worker. Where a loader is already installed (jest, ts-node), the host's own require
 * handles .ts and tsx's scoped loading does not apply, so that is the fallback.
 */
function requireTypeScript(modulePath: string): unknown {
  const { require: tsxRequire } = require('tsx/cjs/api') as { require: (id: string, from: string) => unknown };
  try {
    return tsxRequire(modulePath, __filename);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    return require(modulePath);
  }
}
