/**
 * What one fan-out worker records of its clients' connections between two ticks: when each
 * opened, subscribed and closed, what refused or failed it, and the once-per-client times of
 * load/metrics.ts. None of it runs per frame: ClientState (client-state.ts) adds the message path
 * on top, on the same object, so a frame pays for none of this.
 */
import type { NetworkError } from '../../src/errors.ts';
import { METHOD } from '../../src/spec.ts';
import type { ClientPlan, Tick } from './protocol.ts';

/** One client as the measurements see it; times are mono ms, 0 until they happen. */
export interface FanoutClient {
  readonly index: number;
  readonly key: string;
  /** When its connection is due (ms after the ramp's start until the start, then mono ms). */
  startedAt: number;
  openedAt: number;
  subscribeSentAt: number;
  subscribedAt: number;
  firstFrameAt: number;
  refused: boolean;
  /** Last `last_updated` seen per code index, to count an update once per client. */
  readonly lastSeen: Float64Array;
}

/** The part of a tick these records make. */
export type ConnectionCounts = Pick<
  Tick,
  | 'openedAt'
  | 'clientTimes'
  | 'subscribed'
  | 'closed'
  | 'subscribeFailed'
  | 'refusals'
  | 'connectErrors'
  | 'noticeErrors'
  | 'open'
>;

function bump(map: Record<string, number>, key: string): void {
  map[key] = (map[key] ?? 0) + 1;
}

/** The clients of one worker and what happened to their connections since the last tick. */
export class ClientConnections {
  /** The worker's clients, in the order of its ramp. */
  readonly clients: FanoutClient[];
  /** Connections open now. */
  private open = 0;
  private openedAt: number[] = [];
  /** Once-per-client times of distributions named in load/metrics.ts, by metric name. */
  private clientTimes: Record<string, number[]> = {};
  private subscribed: [number, number][] = [];
  private closed: [number, number, number][] = [];
  private subscribeFailed = 0;
  private refusals: Record<string, number> = {};
  private connectErrors: Record<string, number> = {};
  private noticeErrors: Record<string, number> = {};

  /** `codes`: how many codes each client keeps the last update of. */
  constructor(
    plans: readonly ClientPlan[],
    private readonly pairs: readonly string[],
    codes: number,
  ) {
    this.clients = plans.map((c) => ({
      index: c.index,
      key: c.key,
      startedAt: c.startAtMs,
      openedAt: 0,
      subscribeSentAt: 0,
      subscribedAt: 0,
      firstFrameAt: 0,
      refused: false,
      lastSeen: new Float64Array(codes).fill(Number.NaN),
    }));
  }

  /** The handshake of `client` finished at `t`. */
  opened(client: FanoutClient, t: number): void {
    client.openedAt = t;
    this.open++;
    this.clientTime('connect', t - client.startedAt);
    this.openedAt.push(t);
  }

  /** The subscribe message `client` sends at `t`, noted as sent. */
  subscribe(client: FanoutClient, t: number): string {
    client.subscribeSentAt = t;
    return JSON.stringify({ id: `c${client.index}`, method: METHOD.subscribe, params: { pairs: this.pairs } });
  }

  /** The server answered the upgrade of `client` with `status` and `body` (the spec's JSON or anything). */
  refused(client: FanoutClient, status: number, body: Buffer): void {
    client.refused = true;
    let key = `http ${status}`;
    try {
      const parsed = JSON.parse(body.toString()) as { status_number?: unknown };
      if (typeof parsed.status_number === 'string') key = parsed.status_number;
    } catch {
      /* not JSON: keep the HTTP status */
    }
    bump(this.refusals, key);
  }

  /** The connection of `client` failed; counted only before it opened and when not refused. */
  connectError(client: FanoutClient, err: NetworkError): void {
    if (client.openedAt === 0 && !client.refused) bump(this.connectErrors, err.errno ?? err.message.slice(0, 60));
  }

  /** The connection of a client could not even start (the socket's constructor threw). */
  startError(err: Error): void {
    bump(this.connectErrors, err.message.slice(0, 60));
  }

  /** The socket of `client` is gone at `t`, with the close frame's code (1005/1006 without one). */
  closedAt(client: FanoutClient, t: number, code: number): void {
    if (client.openedAt === 0) return;
    this.open--;
    this.closed.push([client.index, t, code]);
  }

  /** The notice that `client`'s subscribe succeeded arrived at `t`: the first one subscribes it. */
  protected subscribeAnswered(client: FanoutClient, t: number): void {
    if (client.subscribedAt !== 0) return;
    client.subscribedAt = t;
    this.clientTime('subscribe', t - client.subscribeSentAt);
    this.clientTime('connect_time', t - client.startedAt);
    this.subscribed.push([client.index, t]);
  }

  /** An error notice with `code` reached `client`; one answering its subscribe fails the subscription. */
  protected errorNotice(client: FanoutClient, code: unknown, id: unknown): void {
    bump(this.noticeErrors, String(code));
    if (client.subscribedAt === 0 && id === `c${client.index}`) this.subscribeFailed++;
  }

  /** Records one client's time (ms) of the distribution `name`. */
  protected clientTime(name: string, ms: number): void {
    const times = this.clientTimes[name];
    if (times) times.push(ms);
    else this.clientTimes[name] = [ms];
  }

  /** The records since the last call, as plain data, and a fresh start (the open count stays). */
  protected takeConnections(): ConnectionCounts {
    const counts: ConnectionCounts = {
      openedAt: this.openedAt,
      clientTimes: this.clientTimes,
      subscribed: this.subscribed,
      closed: this.closed,
      subscribeFailed: this.subscribeFailed,
      refusals: this.refusals,
      connectErrors: this.connectErrors,
      noticeErrors: this.noticeErrors,
      open: this.open,
    };
    this.subscribeFailed = 0;
    this.openedAt = [];
    this.clientTimes = {};
    this.subscribed = [];
    this.closed = [];
    this.refusals = {};
    this.connectErrors = {};
    this.noticeErrors = {};
    return counts;
  }
}
