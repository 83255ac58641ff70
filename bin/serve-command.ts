/**
 * `conform serve`: the reference's command with the fault listing of `--list-faults`, which needs
 * the checks (each names the faults it catches) and so belongs to the CLI, not to the reference.
 * The checks load only when the listing is asked for.
 */
import { serveCommandWith } from '../reference/serve-command.ts';

export const serveCommand = serveCommandWith(async () => {
  const [{ CHECKS }, { faultCatches }, { formatFaults }] = await Promise.all([
    import('../suites/index.ts'),
    import('../src/matrix.ts'),
    import('../reference/faults/index.ts'),
  ]);
  return formatFaults((fault) => faultCatches(CHECKS, fault));
});
