/**
 * Names of the load-result format that more than one writer shares (conform's reports, the k6
 * scripts' handleSummary) and `conform load merge` reads. Import-free, so k6 bundles it too.
 */

/** A result printed on one stdout line (k6 runner pods: `kubectl logs` is then a result file). */
export const RESULT_LINE_PREFIX = 'conform-result ';

/** The `layout` of k6 bucket counts (load/log-buckets.ts), and their unit. */
export const BUCKET_LAYOUT = 'log-buckets-32' as const;
export const BUCKET_UNIT = 'us' as const;
