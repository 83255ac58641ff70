/**
 * Synthetic prices: a seeded random walk per pair in whole price ticks, all arithmetic in
 * decimal.js. ask = mid + n ticks and bid = mid - n ticks, so the mid of ask and bid is exact at
 * the pair's precision and `price` is that mid.
 */
import { Decimal } from './decimal.ts';
import type { PairConfig, PairState } from './catalogue.ts';
import { parsePairCode } from '../src/spec.ts';
import type { MidPrice } from './dialect.ts';
import { mulberry32 } from '../src/random.ts';

/** The current price strings of a pair. */
export interface Quote {
  ask: string;
  bid: string;
  price: string;
  /** Clock ms of the last change of the price. */
  lastUpdated: number;
}

/** A catalogue pair with its walk state. */
export interface PairEntry {
  readonly config: PairConfig;
  readonly code: string;
  readonly assetType: string;
  readonly market: string;
  readonly base: string;
  readonly quote: string;
  readonly state: PairState;
  mid: Decimal;
  readonly tick: Decimal;
  readonly halfSpread: Decimal;
  current: Quote;
}

/** Re-exported for the load tools' seeded schedules. */

/** States whose price exists and streams. */
const PRICED: readonly PairState[] = ['active', 'stale'];

/** A quiet pair changes at most once in this many ms. */
export const QUIET_PAIR_MS = 3000;

/** Time a stale pair's price was last updated: an hour before start. */
const STALE_AGE_MS = 3_600_000;

/** Units of the last decimal in the tick of a pair quoted on a coarser grid (0.05 at two decimals). */
const TICK_UNITS = 5;
/** Where a weighted mid sits between bid and ask: 40 % of the spread above the bid. */
const WEIGHT = 0.4;

/**
 * A quote on a grid of `step`: bid the step at or below `mid` (never zero), ask one step above, and
 * the price their mid rounded to the grid half even, so it lands on the bid or the ask in turn.
 */
function onTick(mid: Decimal, step: Decimal, places: number): { ask: string; bid: string; price: string } {
  let bid = mid.dividedToIntegerBy(step).times(step);
  if (bid.lte(0)) bid = step;
  const ask = bid.plus(step);
  const price = ask.plus(bid).dividedBy(2).dividedBy(step).toDecimalPlaces(0, Decimal.ROUND_HALF_EVEN).times(step);
  return { ask: ask.toFixed(places), bid: bid.toFixed(places), price: price.toFixed(places) };
}

/** Every pair's current quote, stepped once per tick. */
export class PriceBook {
  readonly pairs = new Map<string, PairEntry>();
  private readonly random: () => number;

  /**
   * `mid` (a dialect's choice): `even-spread` keeps ask and bid the same number of ticks from the
   * walk's mid; otherwise the bid sits one tick closer, so the true mid falls half a tick off the
   * grid and is written `exact` (one more decimal) or `rounded` to the precision.
   */
  private readonly quiet = new Set<string>();

  /** `quietPairs`: every third pair in catalogue order changes at most once every QUIET_PAIR_MS. */
  constructor(
    pairs: readonly PairConfig[],
    seed: number,
    now: number,
    private readonly mid: MidPrice = 'even-spread',
    quietPairs = false,
  ) {
    this.random = mulberry32(seed);
    for (const config of pairs) {
      const parts = parsePairCode(config.code)!;
      const tick = new Decimal(1).dividedBy(new Decimal(10).pow(config.precision));
      const halfSpread = tick.times(config.halfSpreadTicks ?? 2);
      let mid = new Decimal(config.price);
      // Keep bid positive: the mid stays at least one tick above the half-spread.
      if (mid.lte(halfSpread)) mid = halfSpread.plus(tick);
      const state = config.state ?? 'active';
      const entry: PairEntry = {
        config,
        code: config.code,
        assetType: parts.assetType,
        market: parts.market,
        base: parts.base,
        quote: parts.quote,
        state,
        mid,
        tick,
        halfSpread,
        current: { ask: '', bid: '', price: '', lastUpdated: state === 'stale' ? now - STALE_AGE_MS : now },
      };
      this.quote(entry, entry.current.lastUpdated);
      if (quietPairs && this.pairs.size % 3 === 2) this.quiet.add(config.code);
      this.pairs.set(config.code, entry);
    }
  }

  /** Pairs whose price never moves (a dialect's still pairs). */
  private held: ReadonlySet<string> = new Set();

  /** Holds these pairs' prices where they started. */
  hold(codes: ReadonlySet<string>): void {
    this.held = codes;
  }

  /** Whether the pair has a price at all (pushes and 200/50102 answers). */
  static priced(entry: PairEntry): boolean {
    return PRICED.includes(entry.state);
  }

  private quote(entry: PairEntry, at: number): void {
    const places = entry.config.precision;
    const ask = entry.mid.plus(entry.halfSpread);
    if (this.mid === 'even-spread') {
      entry.current = {
        ask: ask.toFixed(places),
        bid: entry.mid.minus(entry.halfSpread).toFixed(places),
        price: entry.mid.toFixed(places),
        lastUpdated: at,
      };
      return;
    }
    if (this.mid === 'tick') {
      entry.current = { ...onTick(entry.mid, entry.tick.times(TICK_UNITS), places), lastUpdated: at };
      return;
    }
    // The walk keeps mid > halfSpread, so this bid stays positive.
    const bid = entry.mid.minus(entry.halfSpread).plus(entry.tick);
    const mid = ask.plus(bid).dividedBy(2);
    const price =
      this.mid === 'exact'
        ? mid.toFixed(places + 1)
        : this.mid === 'weighted'
          ? bid.plus(ask.minus(bid).times(WEIGHT)).toFixed(places + 1)
          : mid.toDecimalPlaces(places, Decimal.ROUND_HALF_UP).toFixed(places);
    entry.current = { ask: ask.toFixed(places), bid: bid.toFixed(places), price, lastUpdated: at };
  }

  /**
   * One step of the walk at clock time `now`: each active pair whose market `isOpen` moves by
   * 1 to 3 ticks up or down with `probability`. Returns the codes whose price changed; only they
   * get a new `lastUpdated`.
   */
  step(now: number, probability: number, isOpen: (entry: PairEntry) => boolean): string[] {
    const changed: string[] = [];
    for (const entry of this.pairs.values()) {
      if (entry.state !== 'active' || !isOpen(entry)) continue;
      if (this.quiet.has(entry.code) && now - entry.current.lastUpdated < QUIET_PAIR_MS) continue;
      if (this.held.has(entry.code)) continue;
      if (this.random() >= probability) continue;
      const size = 1 + Math.floor(this.random() * 3);
      const up = this.random() < 0.5;
      let next = entry.mid.plus(entry.tick.times(up ? size : -size));
      if (next.lte(entry.halfSpread)) next = entry.mid.plus(entry.tick.times(size));
      if (next.eq(entry.mid)) continue;
      entry.mid = next;
      this.quote(entry, now);
      changed.push(entry.code);
    }
    return changed;
  }
}
