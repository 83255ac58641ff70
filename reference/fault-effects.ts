/**
 * The service's view of the faults: each fault's effect as its record (faults/) gives it, and the
 * seams of a service running one. Reading a record is reading the whole of that fault's effect; the
 * correct path (admission.ts, session.ts, fanout.ts, rest.ts, service.ts) names no fault.
 */
import { FAULTS, type FaultName } from './faults/index.ts';
import { deviate, type Deviation, type Seams } from './seams.ts';

/** Every fault's effect, by name. */
export const FAULT_EFFECTS: Readonly<Record<FaultName, Deviation>> = Object.fromEntries(
  FAULTS.map((x) => [x.name, x.effect]),
) as Record<FaultName, Deviation>;

/** The seams of a service running `fault` (none: the correct seams). */
export function faultSeams(fault: FaultName | undefined): Readonly<Seams> {
  return deviate(fault === undefined ? undefined : FAULT_EFFECTS[fault]);
}
