/** The execution segment of this k6 instance, read from k6's execution context. */
import exec from 'k6/execution';
import { segmentOf } from './summary.ts';

/** `0:1` when k6 gives no test options (they are not readable in every context). */
export function currentSegment(): string {
  try {
    return segmentOf(exec.test.options);
  } catch {
    return '0:1';
  }
}
