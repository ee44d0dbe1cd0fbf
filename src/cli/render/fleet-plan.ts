/** Text for `backfill plan` of a fleet spec: one row per member, its problems under the table, the totals. */
import Table from 'cli-table3';
import { shortHash, transformLabel } from '../../domain/labels';
import type { FleetPlan } from '../../fleet/plan-fleet';
import { plainStyle } from './status';
import { count as n, duration as seconds } from './units';
import { describeGuards } from './guard-readings';

export function renderFleetPlan(p: FleetPlan, specFile: string): string {
  const table = new Table({ style: plainStyle(), head: ['member', 'wave', 'database', 'rows in scope', 'partitions', 'estimate', 'notes'] });
  for (const m of p.members) {
    const notes = m.excluded
      ? `excluded: ${m.excluded.reason}`
      : m.problems.length > 0
        ? `REFUSED: ${m.problems.length} problem(s), below`
        : m.warnings.length > 0
          ? `${m.warnings.length} warning(s), below`
          : '';
    table.push([
      m.variable,
      m.wave,
      m.identity ?? '',
      m.rows === undefined ? '' : `${n(m.rows)}${m.rowsExact ? '' : ' (est.)'}`,
      m.partitions ?? '',
      m.durationSeconds === undefined ? '' : `${m.lowerBound ? '≥ ' : ''}${seconds(m.durationSeconds)}`,
      notes,
    ]);
  }
  const t = p.totals;
  const lines = [
    `Fleet ${p.name} (${specFile}): ${t.members} member(s) in ${p.waves} wave(s)${t.excluded ? `, ${t.excluded} excluded` : ''}`,
    `  transform ${transformLabel(p.transform)}, fleet hash ${shortHash(p.fleetHash)}`,
    table.toString(),
    `  in all: ${n(t.rows)} rows in scope, ${n(t.partitions)} partitions over ${t.planned} member(s)`,
  ];
  for (const m of p.members) if (m.guards) lines.push(...describeGuards(m.guards, m.variable));
  for (const m of p.members) {
    for (const problem of m.problems) lines.push(`${m.variable}: ${problem.path ? `${problem.path} ` : ''}${problem.message}`);
    for (const w of m.warnings) lines.push(`${m.variable}: warning: ${w}`);
  }
  if (!p.ok)
    lines.push(
      `Refused: ${t.refused} member(s) cannot take this spec. Fix them, or leave them out on purpose: backfill plan ${specFile} --exclude NAME --reason "…"`,
    );
  return lines.join('\n');
}
