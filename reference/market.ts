/**
 * Market sessions from a clock, in each market's real IANA zone (Intl). Pure: no I/O, no timers.
 */
import { ASSET_TYPE, EXTENDED_HOURS_MARKET, type MarketReason, type MarketSession } from '../src/spec.ts';

/** The market object of the price record (spec: Market object). */
export interface MarketInfo {
  open: boolean;
  reason: MarketReason;
  session: MarketSession;
  /** Absent for Crypto (spec: Market object). */
  timezone?: string;
}

/**
 * Zone of each non-Crypto asset type when a pair names none. The spec only says "IANA zone
 * name"; these are where the instruments mostly trade.
 */
export const DEFAULT_ZONES: Readonly<Record<string, string>> = {
  [ASSET_TYPE.equity]: 'America/New_York',
  [ASSET_TYPE.forex]: 'America/New_York',
  [ASSET_TYPE.commodity]: 'America/Chicago',
  [ASSET_TYPE.metal]: 'Europe/London',
};
const FALLBACK_ZONE = 'UTC';

/**
 * US equity sessions in New York minutes since midnight: the exchanges' usual hours, which the spec
 * does not state (PRE 04:00, REG 09:30, POST 16:00–20:00).
 */
const US_PRE = 4 * 60;
const US_REG = 9 * 60 + 30;
const US_POST = 16 * 60;
const US_END = 20 * 60;

const formatters = new Map<string, Intl.DateTimeFormat>();
function formatter(zone: string): Intl.DateTimeFormat {
  let f = formatters.get(zone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      weekday: 'short',
      hour: '2-digit',
      minute: '2-digit',
      hourCycle: 'h23',
    });
    formatters.set(zone, f);
  }
  return f;
}

/** Weekday (0 = Sunday) and minutes since local midnight of `ms` in `zone`. */
export function localTime(ms: number, zone: string): { weekday: number; minutes: number } {
  let weekday = 0;
  let hour = 0;
  let minute = 0;
  for (const part of formatter(zone).formatToParts(ms)) {
    if (part.type === 'weekday') weekday = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'].indexOf(part.value);
    else if (part.type === 'hour') hour = Number(part.value);
    else if (part.type === 'minute') minute = Number(part.value);
  }
  return { weekday, minutes: hour * 60 + minute };
}

/** The zone a pair reports: its own, else its asset type's; undefined for Crypto. */
export function zoneOf(assetType: string, timezone?: string): string | undefined {
  if (assetType === ASSET_TYPE.crypto) return undefined;
  return timezone ?? DEFAULT_ZONES[assetType] ?? FALLBACK_ZONE;
}

const REGULAR: MarketInfo = { open: true, reason: 'regular_session', session: 'REG' };
const CLOSED: MarketInfo = { open: false, reason: 'market_closed', session: 'CLOSED' };

/** Whether a pair's market has extended hours: as configured, else the US equities of the spec's example. */
export const hasExtendedHours = (assetType: string, market: string, configured?: boolean): boolean =>
  configured ?? (assetType === ASSET_TYPE.equity && market === EXTENDED_HOURS_MARKET);

/**
 * The market object of a pair at `ms` (spec: Market object):
 * Crypto continuous REG with no zone; equities with extended hours PRE/REG/POST/CLOSED by New York
 * time; other assets regular on weekdays and closed at weekends, in their zone.
 */
export function marketAt(
  ms: number,
  assetType: string,
  market: string,
  timezone?: string,
  extendedHours?: boolean,
): MarketInfo {
  const zone = zoneOf(assetType, timezone);
  if (zone === undefined) return { open: true, reason: 'continuous', session: 'REG' };
  const { weekday, minutes } = localTime(ms, zone);
  const weekend = weekday === 0 || weekday === 6;
  if (weekend) return { ...CLOSED, timezone: zone };
  if (hasExtendedHours(assetType, market, extendedHours)) {
    if (minutes >= US_PRE && minutes < US_REG)
      return { open: true, reason: 'pre_session', session: 'PRE', timezone: zone };
    if (minutes >= US_REG && minutes < US_POST) return { ...REGULAR, timezone: zone };
    if (minutes >= US_POST && minutes < US_END)
      return { open: true, reason: 'post_session', session: 'POST', timezone: zone };
    return { ...CLOSED, timezone: zone };
  }
  return { ...REGULAR, timezone: zone };
}

/** The market object of a stale pair: `no_price`, open, REG as in the spec's example. */
export function staleMarket(assetType: string, timezone?: string): MarketInfo {
  const zone = zoneOf(assetType, timezone);
  return zone === undefined
    ? { open: true, reason: 'no_price', session: 'REG' }
    : { open: true, reason: 'no_price', session: 'REG', timezone: zone };
}
