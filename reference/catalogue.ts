/**
 * The default catalogue of the reference service: 40+ pairs over Crypto, Equity (US, and one LSE), Forex,
 * Commodity and Metal, each with its own precision, plus one pair in each special state.
 */
import { ASSET_TYPE } from '../src/spec.ts';

/** What a pair's price answer is, beyond the normal 200 (spec: GET /v1/price, Errors). */
export const PAIR_STATES = ['active', 'stale', 'inactive', 'no-price', 'unavailable', 'maintenance', 'broken'] as const;
export type PairState = (typeof PAIR_STATES)[number];

/** A pool of a crypto pair (spec: GET /v1/price `pool`; format and effect not shown). */
export type PoolState = 'ok' | 'unavailable';

export interface PairConfig {
  /** `<asset_type>:<market>:<base>/<quote>`. */
  code: string;
  name: string;
  /** Decimal places of ask, bid and price. */
  precision: number;
  /** Starting mid-price, a decimal string with at most `precision` places. */
  price: string;
  /** Half-spread in price ticks (ask = mid + n ticks, bid = mid - n ticks); default 2. */
  halfSpreadTicks?: number;
  /** Default `active`. */
  state?: PairState;
  /** IANA zone of the market; default by asset type (Crypto has none). */
  timezone?: string;
  /** Whether the market has pre- and post-market sessions; default: the US equities (`Equity:US:`). */
  extendedHours?: boolean;
  /** Pool addresses accepted by `pool`, with their state. */
  pools?: Record<string, PoolState>;
}

const { crypto, equity, forex, commodity, metal } = ASSET_TYPE;
const p = (
  type: string,
  market: string,
  base: string,
  quote: string,
  name: string,
  precision: number,
  price: string,
  extra: Partial<PairConfig> = {},
): PairConfig => ({ code: `${type}:${market}:${base}/${quote}`, name, precision, price, ...extra });

/** Pool addresses of the default catalogue (test data; any string is accepted as a pool key). */
export const DEFAULT_POOLS = {
  ok: '0x1111111111111111111111111111111111111111',
  unavailable: '0x2222222222222222222222222222222222222222',
} as const;

/** Further US equities, so one connection can subscribe the spec's maximum of 100 distinct pairs. */
function moreEquities(): PairConfig[] {
  const names: [string, string, string][] = [
    ['NFLX', 'Netflix Inc.', '610.20'],
    ['ORCL', 'Oracle Corp.', '125.40'],
    ['INTC', 'Intel Corp.', '30.55'],
    ['AMD', 'Advanced Micro Devices', '160.10'],
    ['IBM', 'International Business Machines', '182.30'],
    ['CSCO', 'Cisco Systems', '48.70'],
    ['ADBE', 'Adobe Inc.', '505.60'],
    ['CRM', 'Salesforce Inc.', '290.80'],
    ['PYPL', 'PayPal Holdings', '64.20'],
    ['QCOM', 'Qualcomm Inc.', '170.90'],
    ['TXN', 'Texas Instruments', '172.40'],
    ['AVGO', 'Broadcom Inc.', '1320.50'],
    ['V', 'Visa Inc.', '275.30'],
    ['MA', 'Mastercard Inc.', '460.10'],
    ['BAC', 'Bank of America', '37.80'],
    ['WFC', 'Wells Fargo', '58.40'],
    ['GS', 'Goldman Sachs', '420.70'],
    ['MS', 'Morgan Stanley', '92.10'],
    ['C', 'Citigroup Inc.', '62.30'],
    ['AXP', 'American Express', '225.60'],
    ['PEP', 'PepsiCo Inc.', '170.20'],
    ['MCD', "McDonald's Corp.", '270.50'],
    ['NKE', 'Nike Inc.', '93.40'],
    ['SBUX', 'Starbucks Corp.', '88.10'],
    ['WMT', 'Walmart Inc.', '60.20'],
    ['COST', 'Costco Wholesale', '720.40'],
    ['HD', 'Home Depot', '345.20'],
    ['LOW', "Lowe's Companies", '230.10'],
    ['DIS', 'Walt Disney Co.', '112.30'],
    ['T', 'AT&T Inc.', '17.250'],
    ['VZ', 'Verizon Communications', '40.150'],
    ['PFE', 'Pfizer Inc.', '27.600'],
    ['JNJ', 'Johnson & Johnson', '152.40'],
    ['MRK', 'Merck & Co.', '128.70'],
    ['ABBV', 'AbbVie Inc.', '162.30'],
    ['UNH', 'UnitedHealth Group', '490.20'],
    ['XOM', 'Exxon Mobil', '118.60'],
    ['CVX', 'Chevron Corp.', '158.90'],
    ['BA', 'Boeing Co.', '180.40'],
    ['CAT', 'Caterpillar Inc.', '350.70'],
    ['GE', 'General Electric', '160.30'],
    ['MMM', '3M Co.', '95.20'],
    ['UBER', 'Uber Technologies', '70.10'],
    ['ABNB', 'Airbnb Inc.', '150.60'],
    ['SHOP', 'Shopify Inc.', '72.30'],
    ['SNAP', 'Snap Inc.', '11.450'],
    ['PLTR', 'Palantir Technologies', '22.150'],
    ['COIN', 'Coinbase Global', '230.40'],
  ];
  return names.map(([base, name, price]) => p(equity, 'US', base, 'USD', name, price.split('.')[1]!.length, price));
}

/** Forex crosses in the same spirit. */
function forexCrosses(): PairConfig[] {
  const crosses: [string, string, number, string][] = [
    ['EUR', 'JPY', 3, '163.900'],
    ['GBP', 'JPY', 3, '191.300'],
    ['EUR', 'CHF', 5, '0.97800'],
    ['AUD', 'JPY', 3, '98.900'],
    ['EUR', 'AUD', 5, '1.65800'],
    ['EUR', 'CAD', 5, '1.47000'],
    ['GBP', 'CHF', 5, '1.14100'],
    ['CAD', 'JPY', 3, '111.500'],
    ['CHF', 'JPY', 3, '167.600'],
    ['NZD', 'JPY', 3, '90.900'],
    ['AUD', 'NZD', 5, '1.08800'],
    ['GBP', 'AUD', 5, '1.93400'],
    ['USD', 'SEK', 4, '10.7500'],
    ['USD', 'NOK', 4, '10.8200'],
    ['USD', 'MXN', 4, '16.8500'],
    ['USD', 'SGD', 5, '1.35200'],
  ];
  return crosses.map(([base, quote, precision, price]) =>
    p(forex, 'ALL', base, quote, `${base} / ${quote}`, precision, price),
  );
}

export const DEFAULT_PAIRS: readonly PairConfig[] = [
  p(crypto, 'ALL', 'BTC', 'USD', 'Bitcoin', 2, '64250.00'),
  p(crypto, 'ALL', 'ETH', 'USD', 'Ethereum', 2, '3120.50'),
  p(crypto, 'ALL', 'SOL', 'USD', 'Solana', 3, '145.250'),
  p(crypto, 'ALL', 'XRP', 'USD', 'XRP', 5, '0.52340'),
  p(crypto, 'ALL', 'ADA', 'USD', 'Cardano', 5, '0.45120'),
  p(crypto, 'ALL', 'DOGE', 'USD', 'Dogecoin', 6, '0.123400'),
  p(crypto, 'ALL', 'DOT', 'USD', 'Polkadot', 4, '6.8200'),
  p(crypto, 'ALL', 'LTC', 'USD', 'Litecoin', 2, '72.40'),
  p(crypto, 'ALL', 'LINK', 'USD', 'Chainlink', 4, '14.2500'),
  p(crypto, 'ALL', 'ETH', 'BTC', 'Ethereum / Bitcoin', 6, '0.048500'),
  p(crypto, 'ALL', 'UNI', 'USDT', 'Uniswap', 4, '7.9000', {
    pools: { [DEFAULT_POOLS.ok]: 'ok', [DEFAULT_POOLS.unavailable]: 'unavailable' },
  }),
  p(equity, 'US', 'AAPL', 'USD', 'Apple Inc.', 2, '189.30'),
  p(equity, 'US', 'MSFT', 'USD', 'Microsoft Corp.', 2, '415.10'),
  p(equity, 'US', 'GOOGL', 'USD', 'Alphabet Inc. Class A', 2, '152.80'),
  p(equity, 'US', 'AMZN', 'USD', 'Amazon.com Inc.', 2, '178.20'),
  p(equity, 'US', 'NVDA', 'USD', 'NVIDIA Corp.', 2, '875.40'),
  p(equity, 'US', 'TSLA', 'USD', 'Tesla Inc.', 2, '175.60'),
  p(equity, 'US', 'META', 'USD', 'Meta Platforms Inc.', 2, '495.00'),
  p(equity, 'US', 'JPM', 'USD', 'JPMorgan Chase & Co.', 2, '198.50'),
  p(equity, 'US', 'KO', 'USD', 'Coca-Cola Co.', 2, '60.10'),
  p(equity, 'US', 'F', 'USD', 'Ford Motor Co.', 3, '12.150'),
  p(forex, 'ALL', 'EUR', 'USD', 'Euro / US Dollar', 5, '1.08450'),
  p(forex, 'ALL', 'GBP', 'USD', 'British Pound / US Dollar', 5, '1.26500'),
  p(forex, 'ALL', 'USD', 'JPY', 'US Dollar / Japanese Yen', 3, '151.200'),
  p(forex, 'ALL', 'AUD', 'USD', 'Australian Dollar / US Dollar', 5, '0.65400'),
  p(forex, 'ALL', 'USD', 'CHF', 'US Dollar / Swiss Franc', 5, '0.90200'),
  p(forex, 'ALL', 'USD', 'CAD', 'US Dollar / Canadian Dollar', 5, '1.35600'),
  p(forex, 'ALL', 'NZD', 'USD', 'New Zealand Dollar / US Dollar', 5, '0.60100'),
  p(forex, 'ALL', 'EUR', 'GBP', 'Euro / British Pound', 5, '0.85700'),
  p(commodity, 'ALL', 'WTI', 'USD', 'WTI Crude Oil', 2, '81.20'),
  p(commodity, 'ALL', 'BRENT', 'USD', 'Brent Crude Oil', 2, '85.40'),
  p(commodity, 'ALL', 'NG', 'USD', 'Natural Gas', 3, '1.850'),
  p(commodity, 'ALL', 'CORN', 'USD', 'Corn', 2, '432.50'),
  p(commodity, 'ALL', 'WHEAT', 'USD', 'Wheat', 2, '545.00'),
  p(metal, 'ALL', 'XAU', 'USD', 'Gold', 2, '2330.40'),
  p(metal, 'ALL', 'XAG', 'USD', 'Silver', 3, '27.450'),
  p(metal, 'ALL', 'XPT', 'USD', 'Platinum', 2, '960.20'),
  p(metal, 'ALL', 'XPD', 'USD', 'Palladium', 2, '1010.60'),
  p(metal, 'ALL', 'HG', 'USD', 'Copper', 4, '4.5200'),
  ...moreEquities(),
  ...forexCrosses(),
  // An equity outside the US: its market has no extended hours (spec: Market object, US equities).
  p(equity, 'LSE', 'VOD', 'GBP', 'Vodafone Group', 2, '72.40', { timezone: 'Europe/London' }),
  // One pair per special state (spec: GET /v1/price and the Errors table).
  p(crypto, 'ALL', 'SHIB', 'USD', 'Shiba Inu (illiquid, stale price)', 8, '0.00002450', { state: 'stale' }),
  p(crypto, 'ALL', 'LUNA', 'USD', 'Terra Classic (inactive)', 6, '0.000100', { state: 'inactive' }),
  p(equity, 'US', 'NOPR', 'USD', 'No Price Corp. (no price)', 2, '10.00', { state: 'no-price' }),
  p(forex, 'ALL', 'USD', 'TRY', 'US Dollar / Turkish Lira (temporarily unavailable)', 4, '32.2000', {
    state: 'unavailable',
  }),
  p(commodity, 'ALL', 'COCOA', 'USD', 'Cocoa (in maintenance)', 2, '9800.00', { state: 'maintenance' }),
  p(metal, 'ALL', 'XRH', 'USD', 'Rhodium (price source failing)', 2, '4650.00', { state: 'broken' }),
];
