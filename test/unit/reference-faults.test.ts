import { describe, expect, it } from 'vitest';
import { Decimal } from 'decimal.js';
import { startReferenceServer, type ReferenceOptions, type ReferenceServer } from '../../reference/index.ts';
import { FAULTS, FAULT_NAMES, findFault, formatFaults, type FaultName } from '../../reference/faults/index.ts';
import { faultCatches } from '../../src/matrix.ts';
import { SPEC_STATEMENTS } from '../../src/statements.ts';
import { LIMITS, PATHS, STATUS, TEXT, pairNotFoundMessage, parsePairCode } from '../../src/spec.ts';
import { CHECKS } from '../../suites/index.ts';
import { connect, get, open, q, subscribe, type Client } from '../helpers/reference.ts';

const WINDOW = 1500;
const BTC = 'Crypto:ALL:BTC/USD';
const ETH = 'Crypto:ALL:ETH/USD';
const AAPL = 'Equity:US:AAPL/USD';
const XAU = 'Metal:ALL:XAU/USD';
/** A Saturday: every non-Crypto market is closed. */
const SATURDAY = Date.UTC(2026, 10, 21, 15, 0);

type Body = Record<string, unknown>;
const price = async (s: ReferenceServer, code: string, key = 'primary'): Promise<Body> =>
  (await get(s, PATHS.price + q({ code }), key)).body;
const priceData = async (s: ReferenceServer, code: string): Promise<Record<string, unknown>> =>
  (await price(s, code)).data as Record<string, unknown>;
const market = async (s: ReferenceServer, code: string): Promise<Record<string, unknown>> =>
  (await priceData(s, code)).market as Record<string, unknown>;
const pairsOf = async (
  s: ReferenceServer,
  query: Record<string, string> = {},
  key = 'primary',
): Promise<Record<string, string>[]> =>
  (await get(s, PATHS.pairs + (Object.keys(query).length ? q(query) : ''), key)).body.data as Record<string, string>[];

/** Opens a primary-key stream that keeps itself alive, runs `fn`, closes. */
async function withStream<T>(s: ReferenceServer, fn: (c: Client) => Promise<T>, key = 'primary'): Promise<T> {
  const c = await open(s, key);
  const timer = setInterval(() => c.send({ method: 'ping' }), WINDOW / 3);
  try {
    return await fn(c);
  } finally {
    clearInterval(timer);
    await c.close();
  }
}

/** Pushes received in 300 ms after the ones already in flight have drained. */
async function settledPushes(c: Client): Promise<Body[]> {
  await c.pushesFor(80);
  return c.pushesFor(300);
}

async function codes(s: ReferenceServer, n: number): Promise<string[]> {
  const all = [...(await pairsOf(s, { per_page: '100' })), ...(await pairsOf(s, { per_page: '100', page: '2' }))];
  return all
    .map((p) => p.code)
    .filter((c) => c !== s.profile.pairs!.stale)
    .slice(0, n);
}

/** A reply to `msg` that comes before the Pong of a following ping: a notice, or nothing. */
async function noticeBeforePong(c: Client, msg: unknown): Promise<Body | undefined> {
  c.send(msg);
  c.send({ method: 'ping' });
  const f = await c.next((x) => x.json?.method !== undefined || x.text === TEXT.pong);
  return f.json;
}

async function tryOpen(s: ReferenceServer, key: string, localAddress?: string): Promise<Client | undefined> {
  const r = await connect(s, key, { localAddress });
  return r.ok ? r.client : undefined;
}

interface Observation {
  /** True when the fault's deviation is seen from outside. */
  deviates(s: ReferenceServer): Promise<boolean>;
  options?: ReferenceOptions;
}

/** For every fault, how a client sees its deviation; the clean server must not show it. */
const OBSERVE: Record<FaultName, Observation> = {
  'envelope-status-number-integer': {
    deviates: async (s) => typeof (await get(s, PATHS.pairs)).body.status_number !== 'string',
  },
  'envelope-ts-string': { deviates: async (s) => !Number.isInteger((await get(s, PATHS.pairs)).body.ts) },
  'envelope-error-data-filled': { deviates: async (s) => (await price(s, 'Crypto:ALL:NOPE/USD')).data !== null },
  'envelope-error-message-missing': { deviates: async (s) => !('message' in (await price(s, 'Crypto:ALL:NOPE/USD'))) },
  'auth-header-case-sensitive': {
    deviates: async (s) => (await get(s, PATHS.pairs, 'primary', 'x-api-key')).body.status_number !== STATUS.OK,
  },
  'auth-canonical-header-refused': {
    deviates: async (s) => (await get(s, PATHS.pairs, 'primary', 'X-API-Key')).body.status_number !== STATUS.OK,
  },
  'auth-missing-key-accepted': {
    deviates: async (s) => (await get(s, PATHS.pairs, null)).body.status_number !== STATUS.UNAUTHORIZED,
  },
  'auth-http-403': { deviates: async (s) => (await get(s, PATHS.pairs, 'unknown')).status !== 401 },
  'auth-suspended-served': {
    deviates: async (s) => (await get(s, PATHS.pairs, 'suspended')).body.status_number !== STATUS.SUSPENDED,
  },
  'pairs-default-per-page-20': { deviates: async (s) => (await pairsOf(s)).length !== LIMITS.defaultPerPage },
  'pairs-page-alone-per-page-20': {
    deviates: async (s) => (await pairsOf(s, { page: '1' })).length !== LIMITS.defaultPerPage,
  },
  'pairs-error-envelope': {
    async deviates(s) {
      const b = (await get(s, PATHS.pairs + q({ page: '0' }))).body;
      return b.data !== null || !('message' in b);
    },
  },
  'pairs-pages-overlap': {
    async deviates(s) {
      const [a, b] = [await pairsOf(s, { page: '1', per_page: '5' }), await pairsOf(s, { page: '2', per_page: '5' })];
      return b.some((p) => a.some((x) => x.code === p.code));
    },
  },
  'pairs-per-page-ignored': { deviates: async (s) => (await pairsOf(s, { per_page: '3' })).length !== 3 },
  'pairs-invalid-page-internal-error': {
    deviates: async (s) => (await get(s, PATHS.pairs + q({ page: '0' }))).body.status_number === STATUS.INTERNAL,
  },
  'pairs-invalid-per-page-internal-error': {
    deviates: async (s) => (await get(s, PATHS.pairs + q({ per_page: 'ten' }))).body.status_number === STATUS.INTERNAL,
  },
  'pairs-type-filter-ignored': {
    deviates: async (s) => (await pairsOf(s, { type: 'Metal' })).some((p) => !p.code.startsWith('Metal:')),
  },
  'pairs-code-search-ignored': {
    deviates: async (s) => (await pairsOf(s, { code: 'BTC' })).some((p) => !p.code.includes('BTC')),
  },
  'pairs-record-name-missing': { deviates: async (s) => (await pairsOf(s)).some((p) => typeof p.name !== 'string') },
  'pairs-base-mismatch': {
    deviates: async (s) => (await pairsOf(s)).some((p) => parsePairCode(p.code)!.base !== p.base),
  },
  'price-ask-number': { deviates: async (s) => typeof (await priceData(s, BTC)).ask !== 'string' },
  'price-not-mid': {
    async deviates(s) {
      const d = (await priceData(s, BTC)) as Record<string, string>;
      return new Decimal(d.price!).gt(d.ask!);
    },
  },
  'price-bid-above-ask': {
    async deviates(s) {
      const d = (await priceData(s, BTC)) as Record<string, string>;
      return new Decimal(d.bid!).gt(d.ask!);
    },
  },
  'price-deep-pair-inverted': {
    async deviates(s) {
      const listed = await codes(s, 200);
      const [first, last] = [
        (await priceData(s, listed[0]!)) as Record<string, string>,
        (await priceData(s, listed.at(-1)!)) as Record<string, string>,
      ];
      // Only the last pair breaks the rule; the first is as it should be.
      return new Decimal(last.bid!).gt(last.ask!) && new Decimal(first.bid!).lte(first.ask!);
    },
  },
  'market-crypto-timezone': { deviates: async (s) => 'timezone' in (await market(s, BTC)) },
  'market-timezone-missing': { deviates: async (s) => !('timezone' in (await market(s, AAPL))) },
  'market-timezone-invalid': {
    async deviates(s) {
      try {
        new Intl.DateTimeFormat('en', { timeZone: (await market(s, AAPL)).timezone as string });
        return false;
      } catch {
        return true;
      }
    },
  },
  'market-crypto-regular-session': { deviates: async (s) => (await market(s, BTC)).reason !== 'continuous' },
  'market-open-inverted': {
    deviates: async (s) => {
      const m = await market(s, AAPL);
      return m.open !== (m.reason !== 'market_closed');
    },
    options: { clock: () => SATURDAY },
  },
  'stale-http-503': {
    deviates: async (s) => (await get(s, PATHS.price + q({ code: s.profile.pairs!.stale! }))).status !== 200,
  },
  'stale-data-null': { deviates: async (s) => (await price(s, s.profile.pairs!.stale!)).data === null },
  'unknown-pair-status-50008': {
    deviates: async (s) => (await price(s, 'Crypto:ALL:NOPE/USD')).status_number !== STATUS.PAIR_NOT_FOUND,
  },
  'missing-code-200': {
    deviates: async (s) => (await get(s, PATHS.price)).body.status_number !== STATUS.INVALID_REQUEST,
  },
  'unknown-endpoint-50004': {
    deviates: async (s) => (await get(s, '/v1/nothing')).body.status_number !== STATUS.NOT_FOUND,
  },
  'probe-status-swapped': {
    deviates: async (s) => (await get(s, PATHS.pairs, 'apiMaintenance')).body.status_number !== STATUS.API_MAINTENANCE,
  },
  'probe-restricted-as-suspended': {
    deviates: async (s) => (await get(s, PATHS.pairs, 'restricted')).body.status_number !== STATUS.RESTRICTED_USER,
  },
  'entitlement-asset-type-ignored': {
    deviates: async (s) => (await price(s, AAPL, 'cryptoOnly')).status_number !== STATUS.ASSET_TYPE_DENIED,
  },
  'entitlement-pairs-list-unfiltered': {
    deviates: async (s) =>
      (await pairsOf(s, { per_page: '100' }, 'cryptoOnly')).some((p) => !p.code.startsWith('Crypto:')),
  },
  'entitlement-whitelist-subscribe': {
    deviates: (s) =>
      withStream(s, async (c) => (await subscribe(c, [ETH])).code !== STATUS.ACCESS_DENIED, 'whitelisted'),
  },
  'entitlement-asset-type-partial': {
    async deviates(s) {
      const rest = (await price(s, XAU, 'cryptoOnly')).status_number !== STATUS.ASSET_TYPE_DENIED;
      const stream = await withStream(
        s,
        async (c) => (await subscribe(c, [XAU])).code !== STATUS.ASSET_TYPE_DENIED,
        'cryptoOnly',
      );
      return rest && stream;
    },
  },
  'entitlement-whitelist-price-ignored': {
    deviates: async (s) => (await price(s, ETH, 'whitelisted')).status_number !== STATUS.ACCESS_DENIED,
  },
  'handshake-body-code': {
    async deviates(s) {
      const r = await connect(s, null);
      return !r.ok && ('code' in r.body || !('status_number' in r.body));
    },
  },
  'handshake-no-stream-accepted': { deviates: async (s) => (await connect(s, 'noStream')).ok },
  'handshake-missing-key-accepted': { deviates: async (s) => (await connect(s, null)).ok },
  'handshake-header-case-sensitive': {
    async deviates(s) {
      const r = await connect(s, 'primary', { header: 'x-api-key' });
      if (r.ok) await r.client.close();
      return !r.ok;
    },
  },
  'limit-per-ip': {
    async deviates(s) {
      const first = await open(s, 'limited');
      const second = await tryOpen(s, 'limited', '127.0.0.2');
      await second?.close();
      await first.close();
      return second !== undefined;
    },
  },
  'limit-off-by-one': {
    async deviates(s) {
      const first = await open(s, 'limited');
      const second = await tryOpen(s, 'limited');
      await second?.close();
      await first.close();
      return second !== undefined;
    },
  },
  'limit-slot-not-freed': {
    async deviates(s) {
      await (await open(s, 'limited')).close();
      const end = Date.now() + 1500;
      while (Date.now() < end) {
        const again = await tryOpen(s, 'limited');
        if (again) {
          await again.close();
          return false;
        }
        await new Promise((r) => setTimeout(r, 50));
      }
      return true;
    },
  },
  'subscribe-extends': {
    deviates: (s) =>
      withStream(s, async (c) => {
        await subscribe(c, [BTC]);
        await subscribe(c, [ETH]);
        return (await settledPushes(c)).some((p) => p.code === BTC);
      }),
  },
  'subscribe-accepts-101': {
    deviates: async (s) => withStream(s, async (c) => (await subscribe(c, await codes(s, 101))).code === STATUS.OK),
  },
  'subscribe-limit-99': {
    deviates: async (s) => withStream(s, async (c) => (await subscribe(c, await codes(s, 100))).code !== STATUS.OK),
  },
  'subscribe-empty-internal-error': {
    deviates: (s) => withStream(s, async (c) => (await subscribe(c, [])).code === STATUS.INTERNAL),
  },
  'subscribe-missing-params-accepted': {
    deviates: (s) =>
      withStream(s, async (c) => {
        c.send({ id: 'm', method: 'subscribe' });
        return (await c.notice()).code !== STATUS.INVALID_REQUEST;
      }),
  },
  'subscribe-pairs-string-accepted': {
    deviates: (s) =>
      withStream(s, async (c) => {
        c.send({ id: 'p', method: 'subscribe', params: { pairs: BTC } });
        return (await c.notice()).code !== STATUS.INVALID_REQUEST;
      }),
  },
  'subscribe-inactive-accepted': {
    deviates: (s) => withStream(s, async (c) => (await subscribe(c, [s.profile.pairs!.inactive!])).code === STATUS.OK),
  },
  'subscribe-unknown-message': {
    deviates: (s) =>
      withStream(
        s,
        async (c) =>
          (await subscribe(c, ['Crypto:ALL:NOPE/USD'])).message !== pairNotFoundMessage('Crypto:ALL:NOPE/USD'),
      ),
  },
  'subscribe-unknown-among-known-dropped': {
    deviates: (s) =>
      withStream(s, async (c) => (await subscribe(c, [BTC, 'Crypto:ALL:NOPE/USD'])).code !== STATUS.PAIR_NOT_FOUND),
  },
  'unsubscribe-keeps-pushing': {
    deviates: (s) =>
      withStream(s, async (c) => {
        await subscribe(c, [BTC, ETH]);
        c.send({ method: 'unsubscribe', params: { pairs: [BTC] } });
        await c.notice();
        return (await settledPushes(c)).some((p) => p.code === BTC);
      }),
  },
  'unsubscribe-first-pair-only': {
    deviates: (s) =>
      withStream(s, async (c) => {
        await subscribe(c, [BTC, ETH, AAPL]);
        c.send({ method: 'unsubscribe', params: { pairs: [BTC, ETH] } });
        await c.notice();
        return (await settledPushes(c)).some((p) => p.code === ETH);
      }),
  },
  'push-unsubscribed-pair': {
    deviates: (s) =>
      withStream(s, async (c) => {
        await subscribe(c, [BTC]);
        return (await settledPushes(c)).some((p) => p.code !== BTC);
      }),
  },
  'push-first-pair-only': {
    deviates: (s) =>
      withStream(s, async (c) => {
        await subscribe(c, [BTC, ETH]);
        return !(await settledPushes(c)).some((p) => p.code === ETH);
      }),
  },
  'push-never-starts': {
    deviates: (s) =>
      withStream(s, async (c) => {
        await subscribe(c, [BTC]);
        return (await c.pushesFor(500)).length === 0;
      }),
  },
  'notice-code-number': {
    deviates: (s) => withStream(s, async (c) => typeof (await subscribe(c, [BTC])).code !== 'string'),
  },
  'notice-id-not-echoed': {
    deviates: (s) => withStream(s, async (c) => (await subscribe(c, [BTC], 'echo-me')).id !== 'echo-me'),
  },
  'notice-subscribe-message-lowercase': {
    deviates: (s) => withStream(s, async (c) => (await subscribe(c, [BTC])).message !== TEXT.subscribeSuccess),
  },
  'unsubscribe-message-capitalized': {
    deviates: (s) =>
      withStream(s, async (c) => {
        await subscribe(c, [BTC]);
        c.send({ method: 'unsubscribe', params: { pairs: [BTC] } });
        return (await c.notice()).message !== TEXT.unsubscribeSuccess;
      }),
  },
  'notice-status-number': {
    deviates: (s) => withStream(s, async (c) => 'status_number' in (await subscribe(c, [BTC]))),
  },
  'notice-denied-shape': {
    deviates: (s) =>
      withStream(
        s,
        async (c) => {
          const n = await subscribe(c, [AAPL], 'denied');
          return n.id !== 'denied' || n.data !== null;
        },
        'cryptoOnly',
      ),
  },
  'notice-malformed-json-ignored': {
    deviates: (s) => withStream(s, async (c) => (await noticeBeforePong(c, '{"method":')) === undefined),
  },
  'notice-unknown-method-ignored': {
    deviates: (s) => withStream(s, async (c) => (await noticeBeforePong(c, { method: 'launch' })) === undefined),
  },
  'ping-reply-json': {
    deviates: (s) =>
      withStream(s, async (c) => {
        c.frames.length = 0;
        c.send({ id: 'p', method: 'ping' });
        return (await c.next()).text !== TEXT.pong;
      }),
  },
  'ping-reply-lowercase': {
    deviates: (s) =>
      withStream(s, async (c) => {
        c.frames.length = 0;
        c.send({ method: 'ping' });
        return (await c.next()).text !== TEXT.pong;
      }),
  },
  'keepalive-never': {
    async deviates(s) {
      const c = await open(s);
      // Generous: the clean server must have closed by then even on a loaded machine.
      await new Promise((r) => setTimeout(r, WINDOW + 2500));
      const stillOpen = c.closed === undefined;
      await c.close();
      return stillOpen;
    },
  },
  'keepalive-early': {
    async deviates(s) {
      const c = await open(s);
      await new Promise((r) => setTimeout(r, WINDOW - 300));
      const closedEarly = c.closed !== undefined;
      await c.close();
      return closedEarly;
    },
  },
  'keepalive-ping-not-reset': {
    async deviates(s) {
      const c = await open(s);
      const timer = setInterval(() => c.send({ method: 'ping' }), WINDOW / 3);
      await new Promise((r) => setTimeout(r, WINDOW * 2));
      clearInterval(timer);
      const closed = c.closed !== undefined;
      await c.close();
      return closed;
    },
  },
  'push-missing-bid': {
    deviates: (s) =>
      withStream(s, async (c) => {
        await subscribe(c, [BTC]);
        return !('bid' in (await c.next((f) => f.json?.code === BTC)).json!);
      }),
  },
  'push-changed-missing-bid': {
    deviates: (s) =>
      withStream(s, async (c) => {
        await subscribe(c, [BTC]);
        const first = (await c.next((f) => f.json?.code === BTC)).json!;
        await subscribe(c, [ETH]);
        const after = (await c.next((f) => f.json?.code === ETH)).json!;
        // Pushes carry bid until the subscription changes, and lack it after.
        return 'bid' in first && !('bid' in after);
      }),
  },
  'push-price-number': {
    deviates: (s) =>
      withStream(s, async (c) => {
        await subscribe(c, [BTC]);
        return typeof (await c.next((f) => f.json?.code === BTC)).json!.price !== 'string';
      }),
  },
  // Market rules on every pair, not on samples
  'market-crypto-deep-session': {
    // The last Crypto pair of the catalogue leaves REG; the first ones stay.
    deviates: async (s) =>
      (await market(s, 'Crypto:ALL:ETH/BTC')).session !== 'REG' && (await market(s, BTC)).session === 'REG',
  },
  'market-timezone-alias': { deviates: async (s) => (await market(s, AAPL)).timezone === 'america/new_york' },
  'market-extended-hours-non-us': {
    deviates: async (s) => (await market(s, XAU)).reason === 'pre_session',
    options: { clock: () => SATURDAY },
  },
  // Requests without id, the whole post-connect auth notice, keys counted apart, malformed messages
  'request-without-id-refused': {
    deviates: (s) =>
      withStream(s, async (c) => {
        c.send({ method: 'subscribe', params: { pairs: [BTC] } });
        return (await c.notice()).method === 'error';
      }),
  },
  'auth-notice-status-number': {
    deviates: async (s) => {
      const r = await connect(s, null);
      if (!r.ok) return false;
      try {
        return 'status_number' in (await r.client.notice());
      } finally {
        await r.client.close();
      }
    },
  },
  'limit-pooled-across-keys': {
    deviates: async (s) => {
      const held = [await tryOpen(s, 'limited')];
      try {
        for (let i = 0; i < Number(s.profile.keys.secondary!.connections); i++)
          held.push(await tryOpen(s, 'secondary'));
        return held.includes(undefined);
      } finally {
        await Promise.all(held.map((c) => c?.close()));
      }
    },
  },
  'unsubscribe-invalid-pairs-accepted': {
    deviates: (s) =>
      withStream(s, async (c) => {
        await subscribe(c, [BTC]);
        c.send({ id: 'u', method: 'unsubscribe' });
        return (await c.notice()).code === STATUS.OK;
      }),
  },
  'subscribe-params-without-pairs-accepted': {
    deviates: (s) =>
      withStream(s, async (c) => {
        c.send({ id: 'e', method: 'subscribe', params: {} });
        return (await c.notice()).code === STATUS.OK;
      }),
  },
  'notice-not-object-ignored': {
    deviates: (s) => withStream(s, async (c) => (await noticeBeforePong(c, '["conform"]')) === undefined),
  },
  'notice-missing-method-ignored': {
    deviates: (s) => withStream(s, async (c) => (await noticeBeforePong(c, { id: 'm', params: {} })) === undefined),
  },
  // Catalogue reach
  'push-after-ping': {
    async deviates(s) {
      // No ping: the pushes must start all the same.
      const c = await open(s);
      try {
        await subscribe(c, [BTC]);
        const before = (await c.pushesFor(500)).length;
        c.send({ method: 'ping' });
        return before === 0 && (await c.pushesFor(500)).length > 0;
      } finally {
        await c.close();
      }
    },
  },
  'stream-refuses-equity': {
    deviates: (s) =>
      withStream(s, async (c) => {
        const notice = await subscribe(c, [AAPL]);
        return notice.code === STATUS.PAIR_NOT_FOUND && (await price(s, AAPL)).status_number === STATUS.OK;
      }),
  },
  'subscribe-replace-drops-kept': {
    deviates: (s) =>
      withStream(s, async (c) => {
        await subscribe(c, [BTC, ETH]);
        await subscribe(c, [ETH, 'Crypto:ALL:SOL/USD']);
        return !(await settledPushes(c)).some((p) => p.code === ETH);
      }),
  },
  'unsubscribe-stops-all': {
    deviates: (s) =>
      withStream(s, async (c) => {
        await subscribe(c, [BTC, ETH]);
        c.send({ method: 'unsubscribe', params: { pairs: [BTC] } });
        await c.notice();
        return !(await settledPushes(c)).some((p) => p.code === ETH);
      }),
  },
  'entitlement-whitelist-unlisted': {
    async deviates(s) {
      const listed = (await pairsOf(s, {}, 'whitelisted')).map((p) => p.code);
      return !listed.includes(AAPL) && (await price(s, AAPL, 'whitelisted')).status_number === STATUS.OK;
    },
  },
  'pairs-type-ignores-code': {
    deviates: async (s) => (await pairsOf(s, { type: 'Crypto', code: 'BTC' })).some((p) => !p.code.includes('BTC')),
  },
  'pong-stops-when-subscribed': {
    deviates: (s) =>
      withStream(s, async (c) => {
        await subscribe(c, [BTC]);
        c.frames.length = 0;
        c.send({ method: 'ping' });
        await c.pushesFor(500);
        return !c.frames.some((f) => f.text === TEXT.pong);
      }),
  },
  'limit-refusal-holds-slot': {
    async deviates(s) {
      const first = await tryOpen(s, 'limited');
      const refused = await tryOpen(s, 'limited');
      await refused?.close();
      await first?.close();
      const end = Date.now() + 1500;
      while (Date.now() < end) {
        const again = await tryOpen(s, 'limited');
        if (again) {
          await again.close();
          return false;
        }
        await new Promise((r) => setTimeout(r, 50));
      }
      return true;
    },
  },
  'price-late-type-inverted': {
    async deviates(s) {
      const listed = await codes(s, 200);
      const type = (code: string): string => code.split(':')[0]!;
      const lastType = type(listed.at(-1)!);
      const firstOfLast = listed.findIndex((c) => type(c) === lastType);
      const [first, last] = [
        (await priceData(s, listed[0]!)) as Record<string, string>,
        (await priceData(s, listed.at(-1)!)) as Record<string, string>,
      ];
      // The last listed type comes after every other pair, and only its prices are inverted.
      return (
        listed.slice(firstOfLast).every((c) => type(c) === lastType) &&
        new Decimal(last.bid!).gt(last.ask!) &&
        new Decimal(first.bid!).lte(first.ask!)
      );
    },
  },
  'limit-slots-never-freed': {
    async deviates(s) {
      // The primary key's slots, taken one by one and each closed at once, run out at its allowance.
      const allowance = Number(s.profile.keys.primary.connections);
      for (let i = 0; i < allowance; i++) await (await open(s, 'primary')).close();
      await new Promise((r) => setTimeout(r, 200));
      const again = await tryOpen(s, 'primary');
      await again?.close();
      return again === undefined;
    },
  },
  'limit-pooled-with-primary': {
    deviates: async (s) => {
      const held: (Client | undefined)[] = [];
      try {
        for (let i = 0; i < Number(s.profile.keys.secondary!.connections); i++)
          held.push(await tryOpen(s, 'secondary'));
        // keys.secondary took all its own slots; keys.primary, within its own allowance, is refused.
        const primary = await tryOpen(s, 'primary');
        held.push(primary);
        return !held.slice(0, -1).includes(undefined) && primary === undefined;
      } finally {
        await Promise.all(held.map((c) => c?.close()));
      }
    },
  },
  'refused-attempt-holds-slot': {
    async deviates(s) {
      // keys.cryptoOnly allows two connections: both open, a third refused, one closed, and one more.
      const held = [(await tryOpen(s, 'cryptoOnly'))!, (await tryOpen(s, 'cryptoOnly'))!];
      const third = await tryOpen(s, 'cryptoOnly');
      await third?.close();
      await held.pop()!.close();
      const again = await tryOpen(s, 'cryptoOnly');
      await Promise.all([...held, again].map((c) => c?.close()));
      return third === undefined && again === undefined;
    },
  },
  'subscribe-third-extends': {
    deviates: (s) =>
      withStream(s, async (c) => {
        await subscribe(c, [BTC]);
        await subscribe(c, [ETH], 's2');
        await subscribe(c, [XAU], 's3');
        return (await settledPushes(c)).some((p) => p.code === ETH);
      }),
  },
  'resubscribe-after-unsubscribe-silent': {
    deviates: (s) =>
      withStream(s, async (c) => {
        await subscribe(c, [BTC, ETH]);
        c.send({ id: 'u1', method: 'unsubscribe', params: { pairs: [BTC] } });
        await c.notice();
        await subscribe(c, [BTC], 's2');
        return !(await settledPushes(c)).some((p) => p.code === BTC);
      }),
  },
  'unsubscribe-restores-replaced': {
    deviates: (s) =>
      withStream(s, async (c) => {
        await subscribe(c, [BTC]);
        await subscribe(c, [ETH], 's2');
        c.send({ id: 'u1', method: 'unsubscribe', params: { pairs: [ETH] } });
        await c.notice();
        return (await settledPushes(c)).some((p) => p.code === BTC);
      }),
  },
  'limit-counts-earlier-pairs': {
    deviates: (s) =>
      withStream(s, async (c) => {
        const listed = await codes(s, LIMITS.maxPairsPerSubscribe + 1);
        await subscribe(c, listed.slice(0, LIMITS.maxPairsPerSubscribe));
        return (await subscribe(c, listed.slice(LIMITS.maxPairsPerSubscribe), 's2')).code !== STATUS.OK;
      }),
  },
};

async function observe(name: FaultName, fault: FaultName | undefined): Promise<boolean> {
  const { deviates, options } = OBSERVE[name];
  const s = await startReferenceServer({ tickMs: 50, pingTimeoutMs: WINDOW, ...options, fault });
  try {
    return await deviates(s);
  } finally {
    await s.close();
  }
}

describe('reference faults: the list', () => {
  it('has at least 30 faults with unique names, a rule and the statements of the spec it breaks each', () => {
    expect(FAULTS.length).toBeGreaterThanOrEqual(30);
    expect(new Set(FAULT_NAMES).size).toBe(FAULTS.length);
    const keys = SPEC_STATEMENTS.map((s) => s.key);
    for (const f of FAULTS) {
      expect(f.rule.length).toBeGreaterThan(5);
      expect(f.breaks.length, f.name).toBeGreaterThan(0);
      for (const key of f.breaks) expect(keys, f.name).toContain(key);
    }
  });

  it('has faults in every area of the spec, from the REST envelope to entitlements', () => {
    const areas = new Set(FAULTS.map((f) => f.area));
    for (const area of [
      'rest-envelope',
      'auth',
      'pagination',
      'filters',
      'price-record',
      'market',
      'price-status',
      'handshake',
      'connection-limit',
      'subscription',
      'notice',
      'ping',
      'keepalive',
      'push',
      'entitlements',
    ])
      expect(areas).toContain(area);
  });

  it('has an outside observation for every fault and lists each one', () => {
    expect(Object.keys(OBSERVE).sort()).toEqual([...FAULT_NAMES].sort());
    const listing = formatFaults((fault) => faultCatches(CHECKS, fault));
    for (const name of FAULT_NAMES) expect(listing).toContain(name);
    expect(listing).toMatch(
      /^envelope-ts-string +\[rest-envelope\] breaks: ts is an integer; caught by .*rest\.envelope\.schema/m,
    );
  });

  it('refuses an unknown fault name when starting', async () => {
    expect(() => findFault('no-such-fault')).toThrow(/unknown fault/);
    await expect(startReferenceServer({ fault: 'no-such-fault' })).rejects.toThrow(/--list-faults/);
  });
});

describe('reference faults: time-independent market fault', () => {
  it('market-open-inverted shows in regular hours as well as when closed', async () => {
    const wednesdayNoonNewYork = Date.UTC(2026, 10, 18, 17, 0);
    for (const fault of [undefined, 'market-open-inverted'] as const) {
      const s = await startReferenceServer({ clock: () => wednesdayNoonNewYork, fault });
      try {
        const m = await market(s, AAPL);
        expect([fault, m.reason, m.open]).toEqual([fault, 'regular_session', fault === undefined]);
      } finally {
        await s.close();
      }
    }
  });
});

describe('reference faults: each deviation is visible from outside and absent without the fault', () => {
  for (const fault of FAULT_NAMES) {
    it(`${fault}: ${findFault(fault).rule}`, async () => {
      expect(await observe(fault, undefined)).toBe(false);
      expect(await observe(fault, fault)).toBe(true);
    });
  }
});
