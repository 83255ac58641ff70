/**
 * How the service writes what it sends, per dialect: the REST envelope's timestamp and HTTP
 * status, and (as options grow) the JSON text of envelopes, notices, pushes and handshake bodies.
 * The protocol code builds the spec's objects; only this seam shapes them for the dialect.
 */
import { STATUS, type RestStatus } from '../src/spec.ts';
import type { Dialect, HttpMapping } from './dialect.ts';
import type { Responder } from './seams.ts';

type HttpTable = Readonly<Record<RestStatus, number>>;

/** The conventional HTTP status by meaning; the spec shows only 401 for 50005 and 200 for 50102. */
const CONVENTIONAL: HttpTable = {
  '200': 200,
  '50000': 500,
  '50001': 503,
  '50002': 503,
  '50003': 503,
  '50004': 400,
  '50005': 401,
  '50006': 429,
  '50007': 403,
  '50008': 404,
  '50009': 429,
  '50010': 403,
  '50100': 403,
  '50101': 404,
  '50102': 200,
  '50103': 503,
  '50104': 404,
  '50105': 503,
  '50106': 503,
  '50107': 403,
  '50108': 404,
  '50109': 403,
};

/** Every status the same HTTP status, but for the two the spec pins. */
const uniform = (http: number): HttpTable =>
  Object.fromEntries(
    Object.keys(CONVENTIONAL).map((s) => [
      s,
      s === STATUS.OK || s === STATUS.PRICE_STALE ? 200 : s === STATUS.UNAUTHORIZED ? 401 : http,
    ]),
  ) as HttpTable;

/** Realistic HTTP mappings of the status numbers: the spec leaves each one open but 50005 (401) and 50102 (200). */
export const HTTP_MAPPINGS: Readonly<Record<HttpMapping, HttpTable>> = {
  conventional: CONVENTIONAL,
  // The status lives in the body only: HTTP 200 for every answer the spec does not pin.
  'status-in-body': uniform(200),
  // Client errors 400, server-side states 500/503.
  'client-errors-400': {
    ...uniform(400),
    '50000': 500,
    '50001': 503,
    '50002': 503,
    '50003': 503,
    '50103': 503,
    '50105': 503,
    '50106': 503,
  },
  // An API gateway's choices: 422 for bad parameters, 502 for a failing upstream, 451 for restricted accounts.
  gateway: {
    ...CONVENTIONAL,
    '50000': 502,
    '50004': 422,
    '50007': 401,
    '50009': 503,
    '50100': 451,
    '50103': 502,
    '50104': 400,
    '50107': 401,
    '50108': 400,
  },
};

/** The undocumented field a dialect with extra fields adds to every object it sends. */
export const EXTRA_FIELD = { name: 'x_served_by', value: 'conform-reference' } as const;

const INDENT: Readonly<Record<Dialect['json']['whitespace'], string | undefined>> = {
  compact: undefined,
  indented: '  ',
  tabs: '\t',
};

/**
 * A plain decimal string in exponent notation with every digit kept, as Java's BigDecimal and
 * Python's Decimal write in scientific form: `64250.00` → `6.425000E+4`, `0.00002450` → `2.450E-5`.
 */
export function exponentNotation(plain: string): string {
  const sign = plain.startsWith('-') ? '-' : '';
  const [whole = '', fraction = ''] = plain.slice(sign.length).split('.');
  const integer = whole.replace(/^0+/, '');
  const digits = (integer + fraction).replace(/^0+/, '');
  if (digits === '') return `${sign}0E-${fraction.length}`;
  const exponent =
    integer.length > 0 ? integer.length - 1 : -(fraction.length - fraction.replace(/^0+/, '').length) - 1;
  const mantissa = digits.length > 1 ? `${digits[0]}.${digits.slice(1)}` : digits;
  return `${sign}${mantissa}E${exponent < 0 ? '-' : '+'}${Math.abs(exponent)}`;
}

/** The writer of one service's messages under its dialect. */
export class Wire {
  private readonly http: HttpTable;

  constructor(readonly dialect: Readonly<Dialect>) {
    this.http = HTTP_MAPPINGS[dialect.rest.httpStatus];
  }

  /** `value` as the dialect shapes every object it sends: extra fields and key order, at every depth. */
  shape<T>(value: T): T {
    const { extraFields, keyOrder } = this.dialect.json;
    if (!extraFields && keyOrder === 'spec') return value;
    const walk = (v: unknown): unknown => {
      if (Array.isArray(v)) return v.map(walk);
      if (v === null || typeof v !== 'object') return v;
      const entries = Object.entries(v as Record<string, unknown>).map(([k, x]) => [k, walk(x)] as [string, unknown]);
      if (extraFields) entries.push([EXTRA_FIELD.name, EXTRA_FIELD.value]);
      if (keyOrder === 'reversed') entries.reverse();
      else if (keyOrder === 'sorted') entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
      return Object.fromEntries(entries);
    };
    return walk(value) as T;
  }

  /**
   * The JSON text of a message (an envelope, a notice, a push, a handshake body), shaped and spaced
   * per the dialect.
   */
  text(value: unknown): string {
    return JSON.stringify(this.shape(value), null, INDENT[this.dialect.json.whitespace]);
  }

  /**
   * `last_updated` / `sent_at` of a push for clock time `ms`: in the dialect's unit, or undefined
   * when pushes carry none.
   */
  pushTime(ms: number): number | undefined {
    const unit = this.dialect.stream.timestamps;
    return unit === 'absent' ? undefined : unit === 's' ? Math.floor(ms / 1000) : ms;
  }

  /** A price string (a decimal at the pair's precision) as the dialect writes it on `surface`. */
  price(value: string, surface: 'rest' | 'stream'): string {
    const written = this.zeros(value, surface);
    return this.dialect.numbers.notation === 'exponent' ? exponentNotation(written) : written;
  }

  private zeros(value: string, surface: 'rest' | 'stream'): string {
    const zeros = surface === 'rest' ? this.dialect.numbers.restZeros : this.dialect.numbers.streamZeros;
    if (zeros === 'precision') return value;
    const [whole, fraction = ''] = value.split('.');
    if (zeros === 'trim') {
      const kept = fraction.replace(/0+$/, '');
      return kept ? `${whole}.${kept}` : whole!;
    }
    return fraction.length >= 8 ? value : `${whole}.${fraction.padEnd(8, '0')}`;
  }

  /**
   * The REST refusal of a pair the key may not read, `cause` being the code the stream uses for it
   * (50010 outside the whitelist, 50109 another asset type): that code, or the dialect's one.
   */
  restDenial(cause: RestStatus): RestStatus {
    const denial = this.dialect.rest.denial;
    return denial === 'by-cause' ? cause : denial;
  }

  /**
   * Whether an answer carries `ts`: a dialect like a gateway in front of the service leaves it out
   * of the 401 to a keyless request and of an unknown endpoint's answer.
   */
  hasTs(status: RestStatus, by: Responder): boolean {
    if (this.dialect.rest.gatewayTs === 'present') return true;
    const gateway =
      (by === 'auth' && status === STATUS.UNAUTHORIZED) || (by === 'router' && status === STATUS.NOT_FOUND);
    return !gateway;
  }

  /** The envelope's `ts` for clock time `ms`, in the dialect's unit. */
  ts(ms: number): number {
    return this.dialect.rest.tsUnit === 's' ? Math.floor(ms / 1000) : ms;
  }

  /**
   * The HTTP status of a REST answer with `status`. The spec keeps a 50102 at 200 only while data is
   * still filled: a 50102 without data (a price unavailable) takes the mapping's status of an
   * unavailable pair.
   */
  restHttp(status: RestStatus, withData = true): number {
    if (status === STATUS.PRICE_STALE && !withData) return this.http[STATUS.PAIR_UNAVAILABLE];
    return this.http[status];
  }

  /**
   * The HTTP status of a refused stream handshake. A refusal is never a 2xx: a WebSocket client
   * reads a 200 in place of the upgrade as a broken server, not as an answer, so a mapping that
   * keeps errors at 200 on REST uses the conventional status here.
   */
  handshakeHttp(status: RestStatus): number {
    const http = this.http[status];
    return http < 300 ? CONVENTIONAL[status] : http;
  }
}
