/** A run's before-images as revert reads them, whatever layout the run keeps them in (docs/undo.md). */
export { imagedRows, runImages } from '../../src/undo/run-images';
