/** Options of the trend judgement given on the command line, checked with messages naming the option. */
import { LoadUsageError } from '../../src/errors.ts';

/** `--min-effect`: a share (0.1) or a percentage (10%), above 0 and below 10 (1,000 %). */
export function parseMinEffect(value: unknown): number {
  const text = String(value).trim();
  const m = /^(\d+(?:\.\d+)?)(%?)$/.exec(text);
  const v = m ? Number(m[1]) / (m[2] ? 100 : 1) : Number.NaN;
  if (!(v > 0 && v < 10))
    throw new LoadUsageError(
      `--min-effect ${JSON.stringify(text)}: must be a share such as 0.1 or a percentage such as 10%`,
    );
  return v;
}
