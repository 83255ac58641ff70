/**
 * Every fault that names a stream check, with the whole non-slow stream suite beside its checks,
 * over the raw WebSocket and over Socket.IO: each check it names fails with a violation. A
 * sweep of its own (each fault its own server), so it runs in test:ci, not in npm test.
 */
import { describe, it } from 'vitest';
import { expectFaultFails, WS_FAULTS } from '../../helpers/stream-suite.ts';

describe.each(['ws', 'socketio'] as const)('stream suite over %s against each fault of the reference service', (t) => {
  // Concurrent (vitest's default of 5 at once): each run mostly waits on timers; its own server and key gates.
  // One repeat: on a loaded machine an allowance measurement may skip, honestly, when connections of
  // its key keep closing under it five times; a fault that is not caught fails both runs.
  it.concurrent.for(WS_FAULTS)('fault %s fails %j', { retry: 1 }, async ([fault, ids], { expect: local }) =>
    expectFaultFails(t, fault, ids, local),
  );
});
