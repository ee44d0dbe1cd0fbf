/**
 * Reads a fleet spec file: YAML → the fleet schema → its members, each a single-database spec
 * loaded as `loadSpecFile` loads one (its own hash, resolved), the transform frozen once for all
 * of them (every member runs the same code). Errors carry the file, field, line and column.
 */
import { parseDocument } from 'yaml';
import { SpecError } from '../specs/errors';
import { freeze, loadedFrom, readSpecFile, validateSpecText, type FrozenTransform, type LoadedSpec } from '../specs/load';
import { canonicalJson } from '../util/canonical-json';
import { sha256 } from '../util/hash';
import { fleetSpecSchema, type FleetSpec } from './fleet-schema';
import { fleetMembers, type FleetMember } from './members';

export interface LoadedFleet {
  fleet: FleetSpec;
  file: string;
  /** sha256 of the fleet spec's canonical JSON with the transform's code hash: what a fleet plan is approved by. */
  fleetHash: string;
  transform: FrozenTransform;
  members: (FleetMember & { loaded: LoadedSpec })[];
}

/** Whether a spec's text names a fleet (`databases:`) rather than one database: read, not validated. */
export function namesFleet(text: string): boolean {
  try {
    const raw: unknown = parseDocument(text, { prettyErrors: false }).toJS({ maxAliasCount: 100 });
    return raw !== null && typeof raw === 'object' && !Array.isArray(raw) && 'databases' in raw;
  } catch {
    return false;
  }
}

export function loadFleetSpecFile(file: string, env: Record<string, string | undefined> = process.env): LoadedFleet {
  const fleet = validateSpecText(readSpecFile(file), file, fleetSpecSchema, (raw) =>
    'database' in raw ? { path: 'database', message: 'and databases: are both given; a fleet names its members in databases: alone' } : undefined,
  );
  const found = fleetMembers(fleet, env);
  if (!found.ok) throw new SpecError(file, found.problems);
  const frozen = freeze(fleet, file);
  return {
    fleet,
    file,
    fleetHash: sha256(canonicalJson({ fleet, transformCode: frozen.transform.codeHash })),
    transform: frozen.transform,
    members: found.members.map((m) => ({ ...m, loaded: loadedFrom(m.spec, file, frozen) })),
  };
}
