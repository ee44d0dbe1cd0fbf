import { emit, type OutputOptions } from '../output';
import { checkSpec } from '../start-run';

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
      `  transform ${p.transform.name}@${p.transform.version} (${p.transform.kind}, code ${p.transform.codeHash.slice(0, 12)}), spec hash ${p.specHash.slice(0, 12)}`,
      `  target ${p.target.table} (${p.target.mode} by ${p.target.key.join(', ')}); chunks of ${p.limits.chunkSize}, ${p.limits.concurrency} partitions at a time`,
      `  ${p.partitions.length} partitions:`,
      ...shown,
      ...p.warnings.map((w) => `warning: ${w}`),
    ].join('\n');
  });
}
