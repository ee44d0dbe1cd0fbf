/** `backfill plan`: the checks and partitions of a spec; writes nothing. */
import { checkSpec } from '../../operations/check-spec';
import { shortHash, transformLabel } from '../../shared/labels';
import { emit, type OutputOptions } from '../output';

export async function planCommand(specFile: string, opts: OutputOptions): Promise<void> {
  const { loaded, partitions, warnings } = await checkSpec(specFile);
  const { spec } = loaded;
  const plan = {
    name: spec.name,
    specHash: loaded.specHash,
    transform: { ...loaded.transform },
    target: spec.target,
    limits: spec.limits,
    partitions: partitions.map((p) => ({ id: p.id, bounds: p.bounds })),
    warnings,
  };
  emit(opts, plan, (p) => {
    const shown = p.partitions.slice(0, 10).map((x) => `  ${x.id}`);
    if (p.partitions.length > 10) shown.push(`  … and ${p.partitions.length - 10} more`);
    return [
      `Spec ${specFile} is valid: ${p.name}`,
      `  transform ${transformLabel(p.transform)}, spec hash ${shortHash(p.specHash)}`,
      `  target ${p.target.table} (${p.target.mode} by ${p.target.key.join(', ')}); chunks of ${p.limits.chunkSize}, ${p.limits.concurrency} partitions at a time`,
      `  ${p.partitions.length} partitions:`,
      ...shown,
      ...p.warnings.map((w) => `warning: ${w}`),
    ].join('\n');
  });
}
