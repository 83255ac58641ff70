/**
 * The names of the reference service's faults, as a type only: a check's `catches` names faults,
 * and a misspelt name must not compile. The names are data of the fault records
 * (reference/faults/), so a new fault is one record and the checks that catch it, with no list
 * here to keep in step. The import is type-only and erased: the harness never loads the reference.
 */
import type { FaultName } from '../reference/faults/index.ts';

export type { FaultName };

/**
 * The faults a check catches: written with fault names only, and looked up with any name
 * (`includes(name)`), as the matrix and the mutation driver do with names read from the command line.
 */
export type FaultList = readonly FaultName[] & { includes(name: string): boolean };
