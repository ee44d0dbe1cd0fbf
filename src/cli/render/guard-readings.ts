/** Text for what `plan --measure-guards` read: each guard against its thresholds, and commitMs thresholds to add. */
import type { GuardCalibration, MeasuredGuard } from '../../preflight/guard-calibration';

/** `member`: a fleet's member the readings are of, named in the heading. */
export function describeGuards(c: GuardCalibration, member?: string): string[] {
  const { concurrency } = c;
  const thresholds = (g: MeasuredGuard) =>
    [g.soft !== undefined && `soft ${g.soft}`, g.hard !== undefined && `hard ${g.hard}`].filter(Boolean).join(', ') || 'not in the spec';
  const verdict = (g: MeasuredGuard) =>
    g.overHard > 0
      ? `over hard in ${g.overHard} of ${g.readings}: the run would hold`
      : g.soft === undefined
        ? ''
        : `over soft in ${g.overSoft} of ${g.readings}: partitions would write about ${Math.round(g.writing * 100)} % of the time` +
          (concurrency > 1 ? `, all ${concurrency} at once about ${Math.round(g.allWriting * 100)} %` : '');
  return [
    `${member ? `${member}: guards` : 'Guards'} (${c.readings} readings over ${c.seconds.toFixed(1)} s, from where plan runs, as a worker reads them before each chunk: run it where the workers run):`,
    ...c.guards.map((g) => `  ${g.guard}: median ${g.p50}, p90 ${g.p90}, p95 ${g.p95}, max ${g.max}; ${thresholds(g)}${verdict(g) ? `; ${verdict(g)}` : ''}`),
    ...c.unmeasured.map((u) => `  ${u.guard}: not measured: ${u.why}`),
    ...(c.suggestedCommitMs
      ? [
          "  to slow the run when the application's commits slow (docs/capacity.md), add to the spec:",
          `    limits: { guards: { commitMs: { soft: ${c.suggestedCommitMs.soft}, hard: ${c.suggestedCommitMs.hard} } } }`,
        ]
      : []),
  ];
}
