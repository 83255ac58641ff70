/**
 * `conform init`: the engine's command with the check registry, which src/ may not load itself
 * (what a run would leave unchecked is worked out from the checks' needs).
 */
import { initCommandWith } from '../src/init-command.ts';

export const initCommand = initCommandWith(async () => (await import('../suites/index.ts')).CHECKS);
