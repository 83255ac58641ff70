/** Faults of the push frames' fields. */
import { f, type Fault } from './record.ts';
import { without } from './support.ts';

/** The faults of the push frames' fields. */
export const PUSH_FAULTS = [
  f('push-missing-bid', 'push', 'push frames carry code, ask, bid, price', ['field:push:bid'], {
    push: { message: (p) => without(p, 'bid') },
  }),
  f(
    'push-price-number',
    'push',
    'push price values are JSON strings',
    ['field:push:price', 'rule:service:decimal-strings'],
    { push: { message: (p) => ({ ...p, price: Number(p.price) }) } },
  ),
  f(
    'push-changed-missing-bid',
    'push',
    'push frames carry code, ask, bid, price (here only on a connection whose ' +
      "subscription changed: ws.subscribe.replaces meets them, and ws.push.schema, the rule's owner, " +
      'fails on them)',
    ['field:push:bid'],
    {
      // Connections whose subscription changed (replaced or reduced) get pushes of their own, without bid.
      push: {
        variant: ({ resubscribed }) => (resubscribed ? 'changed' : undefined),
        message: (p, { variant }) => (variant === 'changed' ? without(p, 'bid') : p),
      },
    },
  ),
  f(
    'push-after-ping',
    'push',
    'after success the server pushes data frames without further requests (here pushes start only ' +
      'once a ping follows the subscribe)',
    ['rule:subscribe:pushes-without-requests', 'event:push'],
    { push: { held: (held, { pingedSinceSubscribe }) => held || !pingedSinceSubscribe } },
  ),
] as const satisfies readonly Fault[];
