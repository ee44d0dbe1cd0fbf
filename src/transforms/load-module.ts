/**
 * Loads a TypeScript or JavaScript transform module at runtime (tsx compiles .ts on the
 * fly, so operators deploy the spec's module file as is) and checks its shape.
 */
import { readFileSync } from 'node:fs';
import { sha256 } from '../spec/load';
import type { TransformModule } from './define';

export interface LoadedTransform {
  module: TransformModule;
  codeHash: string;
}

export function loadTransformModule(modulePath: string): LoadedTransform {
  const codeHash = sha256(readFileSync(modulePath));
  // tsx's require compiles TypeScript without registering a global hook in the worker
  const { require: tsxRequire } = require('tsx/cjs/api') as { require: (id: string, from: string) => unknown };
  const loaded = tsxRequire(modulePath, __filename) as { default?: unknown } | unknown;
  const candidate = ((loaded as { default?: unknown })?.default ?? loaded) as Partial<TransformModule>;
  if (!candidate || typeof candidate.transform !== 'function' || !Array.isArray(candidate.columns)) {
    throw new Error(
      `transform module ${modulePath} must default-export defineTransform({ columns: [...], transform(rows) { ... } })`,
    );
  }
  return { module: candidate as TransformModule, codeHash };
}
