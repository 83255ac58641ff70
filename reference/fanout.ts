/**
 * The push fan-out: each tick serialises and frames each subscribed pair's push once per `sent_at`
 * stamp (the clock read again as the writes go on); clients with the same subscription set share one
 * concatenated buffer, written with one socket write per client per tick. A client whose unsent
 * bytes pass `maxBacklogBytes` is skipped (counted), and dropped after `dropAfterTicks` such ticks,
 * so a slow reader cannot make the server buffer without bound.
 */
import { performance } from 'node:perf_hooks';
import { payloadStart, textFrame } from '../src/ws-frame.ts';
import { PriceBook } from './prices.ts';
import { priceFields } from './rest.ts';
import type { Service } from './service.ts';
import type { Client, Group, StreamStats } from './model.ts';
import { WsLink } from './link.ts';

export type { Group } from './model.ts';

/** One tick's pushes of one variant, each serialised, framed and packeted at most once. */
interface TickPushes {
  json(code: string): string | null;
  frame(code: string): Buffer;
  packet(code: string): string;
}

/** The groups of one service and the ticker's work. */
export class FanOut {
  /** Socket.IO event packet prefix of pushes (`2["event",`, or `2/nsp,["event",`), set when Socket.IO is served. */
  private pushPacketPrefix: string | undefined;
  /** Whether Socket.IO pushes carry the JSON as a text string rather than an object. */
  private pushAsText = false;
  private readonly groups = new Map<string, Group>();
  /** Clients whose dropped pairs are still pushed for a few ticks or ms: the ticks left and the clock time it ends. */
  /** Per client, the pairs it dropped that are still pushed, each with the ticks and the time it lags for. */
  private readonly lagging = new Map<Client, Map<string, { left: number; untilMs: number }>>();

  constructor(
    private readonly svc: Service,
    private readonly stats: StreamStats,
  ) {}

  /** Serves Socket.IO pushes too: `event` names the packets the fan-out pre-encodes. */
  enableSocketIo(event: string, namespace: string, jsonText: boolean): void {
    // Socket.IO packet format v5: type 2 (EVENT), then the namespace and a comma unless it is `/`.
    this.pushPacketPrefix = `2${namespace === '/' ? '' : `${namespace},`}[${JSON.stringify(event)},`;
    this.pushAsText = jsonText;
  }

  /** A slow reader's unsent bytes are bounded: past the bound it is dropped instead of buffered. */
  sendable(client: Client): boolean {
    if (!client.link.open) return false;
    // A client that floods requests but never reads would grow our buffer: drop it instead.
    if (client.link.backlog > this.svc.config.maxBacklogBytes) {
      this.stats.slowClientsDropped++;
      client.link.terminate();
      return false;
    }
    return true;
  }

  /** Whether the seams hold a client's pushes back (none does on the correct path). */
  private held(client: Client): boolean {
    return this.svc.seams.push.held(false, { pingedSinceSubscribe: client.pingedSinceSubscribe });
  }

  /** Moves a client to the group of its new subscription set (none when empty). */
  join(client: Client, codes: string[]): void {
    const seams = this.svc.seams.push;
    // Pushes of pairs just dropped may still be queued (the dialect's stopLagTicks), or the fan-out may
    // learn of the drop late (its stopLagMs): they go out a few ticks, or that long, more.
    // Each pair lags from its own drop: a later request neither restarts nor extends it, so the
    // stop time the profile states holds however close together the requests come.
    const { stopLagTicks: lag, stopLagMs } = this.svc.dialect.stream;
    const lagging = this.lagging.get(client) ?? new Map<string, { left: number; untilMs: number }>();
    if (lag > 0 || stopLagMs > 0)
      for (const c of client.subs)
        if (!codes.includes(c)) lagging.set(c, { left: lag, untilMs: this.svc.clock() + stopLagMs });
    for (const c of codes) lagging.delete(c);
    if (lagging.size > 0) this.lagging.set(client, lagging);
    else this.lagging.delete(client);
    client.subs = codes;
    const old = client.group;
    if (old) {
      old.clients.delete(client);
      if (old.clients.size === 0) this.groups.delete(old.id);
    }
    if (codes.length === 0) {
      client.group = undefined;
      return;
    }
    const pushed = seams.pairs(codes, { svc: this.svc });
    const variant = seams.variant({ resubscribed: old !== undefined });
    const id = `${[...pushed].sort().join('\n')}${variant === undefined ? '' : `\n(${variant})`}`;
    let group = this.groups.get(id);
    if (!group) {
      group = { id, codes: pushed, clients: new Set(), variant };
      this.groups.set(id, group);
    }
    group.clients.add(client);
    client.group = group;
  }

  /** The current price of each subscribed pair, right after a subscribe (pushes that wait for a change otherwise). */
  snapshot(client: Client): void {
    const group = client.group;
    if (!this.sendable(client) || !group || this.held(client)) return;
    const now = this.svc.clock();
    const jsons: string[] = [];
    for (const code of group.codes) {
      const json = this.pushJson(code, now, group.variant);
      if (json !== null) jsons.push(json);
    }
    if (jsons.length > 0) client.link.sendPushes(jsons);
  }

  /**
   * One push tick: step the prices, serialise each needed pair once, frame it once per transport,
   * one write per raw WebSocket client (the group's frames concatenated).
   */
  tick(): void {
    const started = performance.now();
    this.fanOut();
    const took = performance.now() - started;
    this.stats.ticks++;
    this.stats.tickMsTotal += took;
    if (took > this.stats.tickMsMax) this.stats.tickMsMax = took;
  }

  /** The JSON text of a pair's push at clock time `now` (null: the pair has no price), written per the dialect. */
  private pushJson(code: string, now: number, variant: string | undefined): string | null {
    const svc = this.svc;
    const entry = svc.book.pairs.get(code);
    if (!entry || !PriceBook.priced(entry)) return null;
    const push: Record<string, unknown> = {
      code,
      ...priceFields(svc, entry, 'stream'),
      last_updated: svc.wire.pushTime(entry.current.lastUpdated),
      sent_at: svc.wire.pushTime(now),
    };
    if (push.last_updated === undefined) delete push.last_updated;
    if (push.sent_at === undefined) delete push.sent_at;
    return svc.wire.text(svc.seams.push.message(push, { variant }));
  }

  /** This tick's pushes of one variant: `changed`, when given, holds the only pairs pushed. */
  private tickPushes(now: number, changed: Set<string> | undefined, variant: string | undefined): TickPushes {
    const jsons = new Map<string, string | null>();
    const frames = new Map<string, Buffer>();
    const packets = new Map<string, string>();
    const json = (code: string): string | null => {
      let text = jsons.get(code);
      if (text !== undefined) return text;
      text = changed && !changed.has(code) ? null : this.pushJson(code, now, variant);
      jsons.set(code, text);
      return text;
    };
    return {
      json,
      frame: (code) => {
        let frame = frames.get(code);
        if (!frame) {
          frame = textFrame(json(code)!);
          frames.set(code, frame);
        }
        return frame;
      },
      // Socket.IO event packets, encoded once per pair like a Socket.IO broadcast.
      packet: (code) => {
        let packet = packets.get(code);
        if (packet === undefined) {
          const text = json(code)!;
          packet = `${this.pushPacketPrefix}${this.pushAsText ? JSON.stringify(text) : text}]`;
          packets.set(code, packet);
        }
        return packet;
      },
    };
  }

  /** One tick more of the pushes queued for pairs a client dropped. */
  private flushLagging(now: number): void {
    for (const [client, lagging] of this.lagging) {
      if (!this.sendable(client)) {
        this.lagging.delete(client);
        continue;
      }
      const codes = [...lagging.keys()];
      const jsons = codes.map((c) => this.pushJson(c, now, client.group?.variant)).filter((j) => j !== null);
      if (jsons.length > 0) client.link.sendPushes(jsons);
      for (const [code, lag] of lagging) if (--lag.left <= 0 && now >= lag.untilMs) lagging.delete(code);
      if (lagging.size === 0) this.lagging.delete(client);
    }
  }

  private fanOut(): void {
    const svc = this.svc;
    const start = svc.clock();
    const moved = svc.book.step(start, svc.config.moveProbability, (e) => svc.market(e, start).open);
    this.flushLagging(start);
    if (this.groups.size === 0) return;
    // Push cadence and trigger are not shown: every tick pushes every pair, or only the pairs that moved.
    const changed = svc.dialect.stream.pushes === 'every-tick' ? undefined : new Set(moved);
    const stamp = new SentAtStamp(svc, start);
    const { maxBacklogBytes, dropAfterTicks } = svc.config;
    const perFrame = svc.config.fanOut === 'per-frame';
    const prefix = this.pushPacketPrefix;
    for (const group of this.groups.values()) {
      const pushesAt = (): TickPushes =>
        stamp.pushes(group.variant, (now) => this.tickPushes(now, changed, group.variant));
      let tick = pushesAt();
      // The group's priced pairs; each is serialised once per tick and stamp, whatever the groups.
      const pushes: string[] = [];
      for (const code of group.codes) if (tick.json(code) !== null) pushes.push(code);
      const n = pushes.length;
      if (n === 0) continue;
      let bytes: Buffer | undefined;
      let groupPackets: string[] | undefined;
      for (const client of group.clients) {
        if (stamp.moved()) {
          tick = pushesAt();
          bytes = undefined;
          groupPackets = undefined;
        }
        const link = client.link;
        if (!link.open || this.held(client)) continue;
        if (link.backlog > maxBacklogBytes) {
          this.stats.framesSkipped += n;
          if (++client.overTicks >= dropAfterTicks) {
            this.stats.slowClientsDropped++;
            link.terminate();
          }
          continue;
        }
        client.overTicks = 0;
        if (link instanceof WsLink) {
          if (perFrame) {
            // The naive baseline the benchmark compares against: one ws.send per frame per client.
            for (const code of pushes) {
              const part = tick.frame(code);
              link.ws.send(part.subarray(payloadStart(part)), { binary: false });
            }
          } else {
            bytes ??= n === 1 ? tick.frame(pushes[0]!) : Buffer.concat(pushes.map(tick.frame));
            // Frames are whole and unmasked, so writing the shared bytes beside ws's own sends is safe.
            link.socket.write(bytes);
          }
        } else if (link.writePushes && prefix !== undefined) {
          groupPackets ??= pushes.map(tick.packet);
          link.writePushes(groupPackets);
        }
        this.stats.framesWritten += n;
      }
    }
  }
}

/**
 * The `sent_at` of a tick's pushes. The spec makes it the time the frame was sent, and writing one
 * tick to thousands of sockets takes tens of milliseconds, so the clock is read before each write
 * and the frames are stamped again when the stamp it gives has moved on (in ms, about once per
 * hundred writes). Each stamp serialises each pair once, whatever the groups.
 */
class SentAtStamp {
  private current: number | undefined;
  private now: number;
  private readonly byVariant = new Map<string | undefined, TickPushes>();

  constructor(
    private readonly svc: Service,
    start: number,
  ) {
    this.now = start;
    this.current = svc.wire.pushTime(start);
  }

  /** Whether the stamp moved on since the pushes were made: they are to be made again. */
  moved(): boolean {
    const now = this.svc.clock();
    const stamp = this.svc.wire.pushTime(now);
    if (stamp === this.current) return false;
    this.now = now;
    this.current = stamp;
    this.byVariant.clear();
    return true;
  }

  /** This stamp's pushes of one variant, made once. */
  pushes(variant: string | undefined, make: (now: number) => TickPushes): TickPushes {
    let tick = this.byVariant.get(variant);
    if (!tick) {
      tick = make(this.now);
      this.byVariant.set(variant, tick);
    }
    return tick;
  }
}
