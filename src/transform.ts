/**
 * The entry for transform authors, the package's `/transform` export: defineTransform types a
 * TypeScript transform (docs/transforms.md) without loading the rest of the engine.
 * A worker supplies this entry to a transform's bundle itself, so a transform runs the same
 * whether or not its own project installs the package.
 */
export { defineTransform, type TransformModule } from './transforms/define';
