/**
 * Loads a module transform for checking or running: bundled from its file when a run is
 * checked or registered, from the ledger's stored artifact when a run's chunks are computed.
 * Either way what runs is a bundle with a code hash, never whatever the file holds at that moment.
 */
import { bundleTransform, evaluateArtifact, type TransformArtifact } from './artifact';
import type { TransformModule } from './define';

export interface LoadedTransform {
  module: TransformModule;
  codeHash: string;
  artifact: TransformArtifact;
}

/** Bundles the module file as it is on disk now, and evaluates that bundle. */
export function loadTransformModule(modulePath: string): LoadedTransform {
  const artifact = bundleTransform(modulePath);
  return { module: evaluateArtifact(artifact, modulePath), codeHash: artifact.codeHash, artifact };
}
