/**
 * Measure, without sockets or threads: what one fan-out worker knows about its clients and what
 * each message does to it. Fed a message's bytes and the time its chunk arrived, it counts pushes,
 * notices and pongs, records latency and server latency, follows each (code, last_updated) update
 * in a ring (update-ring.ts), and validates a sample of the frames; `take()` hands the counts over
 * as plain data and starts them again. What happens to the connections themselves is recorded by
 * the class it extends (client-connections.ts). client-worker.ts joins it to the sockets and the
 * coordinator's port.
 */
import { isUtf8 } from 'node:buffer';
import { METHOD, STATUS, TEXT } from '../../src/spec.ts';
import { validator } from '../../src/validator.ts';
import { guessTimeUnit, MS_PER_UNIT } from '../clock.ts';
import { FastRecorder } from '../histogram.ts';
import { ClientConnections, type FanoutClient } from './client-connections.ts';
import { codeOf, hashBytes, scanPushFrame, scannedFrame, type ScannedFrame } from './frame-scan.ts';
import type { Tick, UpdateRecord, WorkerConfig } from './protocol.ts';
import { drainRing, newRing, RING, updateRecord, type UpdateRing } from './update-ring.ts';

/** What the state reads of the worker's configuration. */
export type StateConfig = Pick<
  WorkerConfig,
  | 'clients'
  | 'pairs'
  | 'updateWindowMs'
  | 'validatePerSecond'
  | 'wallOffsetMs'
  | 'serverOffsetMs'
  | 'msPerUnit'
  | 'frameWindow'
>;

/** The counts of one tick: everything in a Tick that the worker's own health does not give. */
export type TickCounts = Omit<
  Tick,
  | 'type'
  | 'workerIndex'
  | 'atMs'
  | 'steady'
  | 'eventLoopDelayP99Ms'
  | 'steadyEventLoopDelayP99Ms'
  | 'utilization'
  | 'heapUsedBytes'
>;

/**
 * A fan-out service writes the same bytes to every subscriber of the same pairs: a chunk equal to
 * the last one scanned holds the same messages, so their scanned fields are reused, not re-read.
 */
const CACHE_FRAMES = 256;
const NOT_CACHED = -2;

/** Validation keeps this many violation messages per tick. */
const VIOLATION_SAMPLES = 5;

// Validate every `sampleEvery`-th frame on average, adapted to the frame rate over windows of at
// least RATE_WINDOW_MS (a short window between two flushes made the stride 1 for a whole second).
const RATE_WINDOW_MS = 500;

const validate = validator.compiled('push-frame');

/** The measurements of one worker's clients. */
export class ClientState extends ClientConnections {
  private readonly maxCodes: number;
  private readonly codeIndex = new Map<string, number>();
  private readonly codeNames: string[] = [];
  private readonly codeBytes: Buffer[] = [];
  /** Hash of a code's bytes → its index: the scanner hands over bytes, not strings. */
  private readonly byHash = new Map<number, number>();
  private readonly updates: UpdateRing[] = [];
  /** Updates pushed out of a full ring before their window ended; sent with the next tick. */
  private evicted: UpdateRecord[] = [];

  // Per-tick counts, started again by take().
  private readonly latency = new FastRecorder();
  // Receipts before sent_at on the clock in use, by how much: never clamped to 0, they tell the
  // coordinator that its clock estimate was off (it narrows it and shifts both histograms back).
  private readonly latencyBelowZero = new FastRecorder();
  private belowZero = 0;
  // The frames sent inside the shared window (--start-at) alone, whenever they arrive: every host
  // on the schedule measures the same frames, so shards merge to the unsharded distribution.
  private readonly windowLatency = new FastRecorder();
  private readonly windowLatencyBelowZero = new FastRecorder();
  private windowBelowZero = 0;
  private framesWithoutSentAt = 0;
  private readonly serverLatency = new FastRecorder();
  private frames = 0;
  private windowFrames = 0;
  private duplicates = 0;
  private outOfOrder = 0;
  private notices = 0;
  private pongs = 0;
  /** This tick's tallies of load/metrics.ts counts, by metric name. */
  private counts: Record<string, number> = {};
  private validated = 0;
  private violations = 0;
  private violationSamples: string[] = [];
  private maxSentMinusReceived = Number.NEGATIVE_INFINITY;

  private msPerUnit: number | null;
  private sentAtUnit: string | null = null;
  // The stride is drawn at random around its mean: pairs come in the same order every tick, and a
  // fixed stride could keep landing on the same pair.
  private sampleEvery: number;
  private sampleCountdown = 1;
  private rateFrames = 0;
  private rateSince: number;

  private readonly scanned: ScannedFrame = scannedFrame();
  private readonly cache = {
    chunk: null as Buffer | null,
    count: 0,
    start: new Int32Array(CACHE_FRAMES),
    code: new Int32Array(CACHE_FRAMES),
    lastUpdated: new Float64Array(CACHE_FRAMES),
    sentAt: new Float64Array(CACHE_FRAMES),
  };
  /** The current chunk equals cache.chunk / is being recorded into the cache. */
  private replay = false;
  private fill = false;
  /** Index of the current chunk's next message. */
  private cursor = 0;

  /** `now`: mono ms at which the sampling rate's first window begins. */
  constructor(
    private readonly cfg: StateConfig,
    now: number,
  ) {
    // Each client keeps the last update of the pairs it asked for and of a few more codes.
    const maxCodes = cfg.pairs.length + 64;
    super(cfg.clients, cfg.pairs, maxCodes);
    this.maxCodes = maxCodes;
    this.msPerUnit = cfg.msPerUnit;
    this.sampleEvery = cfg.validatePerSecond > 0 ? 1 : 0;
    this.rateSince = now;
    for (const p of cfg.pairs) this.indexOfCode(p);
  }

  /**
   * Called before the messages of each socket chunk (a field, so a socket takes it as its handler
   * without a call in between). `clean`: equal bytes in a later clean chunk hold the same messages.
   */
  readonly onChunk = (buf: Buffer, clean: boolean): void => {
    this.cursor = 0;
    const last = this.cache.chunk;
    this.replay = clean && last !== null && last.length === buf.length && last.equals(buf);
    this.fill = clean && !this.replay;
    if (this.fill) {
      // A copy: the socket reads its next chunk into the same memory.
      this.cache.chunk = Buffer.from(buf);
      this.cache.count = 0;
    }
  };

  /** One message: bytes [start, end) of `buf`; `t` is when its bytes reached the socket, read before any parsing. */
  onMessage(client: FanoutClient, buf: Buffer, start: number, end: number, t: number): void {
    const cache = this.cache;
    const k = this.cursor++;
    if (this.fill) {
      if (k < CACHE_FRAMES) {
        cache.start[k] = start;
        cache.code[k] = NOT_CACHED;
        cache.count = k + 1;
      } else {
        cache.chunk = null;
        this.fill = false;
      }
    }
    if (buf[start] !== 0x7b) {
      if (end - start === TEXT.pong.length && buf.toString('latin1', start, end) === TEXT.pong) this.pongs++;
      else this.notices++;
      return;
    }
    let sample = false;
    if (this.sampleEvery > 0 && --this.sampleCountdown <= 0) {
      sample = true;
      this.sampleCountdown = this.sampleEvery === 1 ? 1 : 1 + Math.floor(Math.random() * (2 * this.sampleEvery - 1));
    }
    if (!sample) {
      if (this.replay && k < cache.count && cache.code[k] !== NOT_CACHED && cache.start[k] === start) {
        this.onPush(client, t, cache.code[k]!, cache.lastUpdated[k]!, cache.sentAt[k]!);
        return;
      }
      const scanned = this.scanned;
      if (scanPushFrame(buf, scanned, start, end)) {
        const idx = this.indexOfScanned(buf, scanned);
        if (this.fill) {
          cache.code[k] = idx;
          cache.lastUpdated[k] = scanned.lastUpdated;
          cache.sentAt[k] = scanned.sentAt;
        }
        this.onPush(client, t, idx, scanned.lastUpdated, scanned.sentAt);
        return;
      }
    }
    const data = buf.subarray(start, end);
    if (sample && !isUtf8(data)) {
      this.validated++;
      if (this.violated()) this.violationSamples.push('text frame is not valid UTF-8');
      return;
    }
    let value: unknown;
    try {
      value = JSON.parse(data.toString());
    } catch {
      if (this.violated()) this.violationSamples.push(`not JSON: ${data.toString().slice(0, 80)}`);
      return;
    }
    const o = value as Record<string, unknown>;
    if (typeof o.method === 'string') {
      this.notices++;
      if (o.method === METHOD.subscribe && o.code === STATUS.OK) this.subscribeAnswered(client, t);
      else if (o.method === METHOD.error) this.errorNotice(client, o.code, o.id);
      return;
    }
    if (sample) {
      this.validated++;
      if (validate(value) !== true && this.violated())
        this.violationSamples.push(validator.validate('push-frame', value).errors.join('; '));
    }
    // last_updated and sent_at appear in the spec's example but are not required fields.
    if (typeof o.code === 'string') {
      this.onPush(
        client,
        t,
        this.indexOfCode(o.code),
        typeof o.last_updated === 'number' ? o.last_updated : Number.NaN,
        typeof o.sent_at === 'number' ? o.sent_at : Number.NaN,
      );
    } else {
      this.frames++;
      if (!sample && this.violated()) this.violationSamples.push(`frame without code: ${data.toString().slice(0, 80)}`);
    }
  }

  /**
   * Counts one occurrence of the count metric `name` of load/metrics.ts: the tick carries it, and
   * the aggregator sums the measured phase's into the row's field.
   */
  count(name: string): void {
    this.counts[name] = (this.counts[name] ?? 0) + 1;
  }

  /**
   * The counts since the last call, as plain data, and a fresh start; updates whose window ended
   * by `now` go with them (every update still followed, when `final`). The validation stride is
   * adapted here to the frame rate seen.
   */
  take(now: number, final = false): TickCounts {
    const counts: TickCounts = {
      frames: this.frames,
      duplicates: this.duplicates,
      outOfOrder: this.outOfOrder,
      notices: this.notices,
      pongs: this.pongs,
      counts: this.counts,
      latency: this.latency.takeEncoded(),
      latencyBelowZero: this.belowZero ? this.latencyBelowZero.takeEncoded() : null,
      ...(this.cfg.frameWindow
        ? {
            windowLatency: this.windowLatency.takeEncoded(),
            windowLatencyBelowZero: this.windowBelowZero ? this.windowLatencyBelowZero.takeEncoded() : null,
          }
        : {}),
      framesWithoutSentAt: this.framesWithoutSentAt,
      serverLatency: this.serverLatency.takeEncoded(),
      ...this.takeConnections(),
      updates: this.takeUpdates(final, now),
      validated: this.validated,
      violations: this.violations,
      violationSamples: this.violationSamples,
      maxSentMinusReceivedMs: this.maxSentMinusReceived,
      windowFrames: this.windowFrames,
      sentAtUnit: this.sentAtUnit,
    };
    this.rateFrames += this.frames;
    if (this.cfg.validatePerSecond > 0 && now - this.rateSince >= RATE_WINDOW_MS) {
      // No frames in the window says nothing about the next one's rate: keep the stride.
      if (this.rateFrames > 0) {
        const rate = (this.rateFrames * 1000) / (now - this.rateSince);
        const perSecond = this.cfg.validatePerSecond;
        this.sampleEvery = Number.isFinite(perSecond) ? Math.max(1, Math.ceil(rate / perSecond)) : 1;
      }
      this.rateFrames = 0;
      this.rateSince = now;
    }
    this.frames = this.windowFrames = this.duplicates = this.outOfOrder = this.notices = this.pongs = 0;
    this.validated = this.violations = 0;
    this.violationSamples = [];
    this.counts = {};
    this.maxSentMinusReceived = Number.NEGATIVE_INFINITY;
    this.belowZero = this.windowBelowZero = this.framesWithoutSentAt = 0;
    return counts;
  }

  /** Counts a violation; true while its message is still wanted as a sample. */
  private violated(): boolean {
    this.violations++;
    return this.violationSamples.length < VIOLATION_SAMPLES;
  }

  private indexOfCode(code: string): number {
    let i = this.codeIndex.get(code);
    if (i === undefined) {
      if (this.codeNames.length >= this.maxCodes) return -1;
      i = this.codeNames.length;
      this.codeIndex.set(code, i);
      this.codeNames.push(code);
      const bytes = Buffer.from(code, 'latin1');
      this.codeBytes.push(bytes);
      const h = hashBytes(bytes, 0, bytes.length);
      if (!this.byHash.has(h)) this.byHash.set(h, i);
      this.updates.push(newRing());
    }
    return i;
  }

  private indexOfScanned(buf: Buffer, f: ScannedFrame): number {
    const i = this.byHash.get(f.codeHash);
    if (i !== undefined) {
      const known = this.codeBytes[i]!;
      const len = f.codeEnd - f.codeStart;
      if (known.length === len) {
        let k = 0;
        while (k < len && buf[f.codeStart + k] === known[k]) k++;
        if (k === len) return i;
      }
    }
    // New code or a hash collision: the slow way, by string.
    return this.indexOfCode(codeOf(buf, f));
  }

  private onPush(client: FanoutClient, t: number, idx: number, lastUpdated: number, sentAt: number): void {
    this.frames++;
    if (client.firstFrameAt === 0) {
      client.firstFrameAt = t;
      this.clientTime('first_frame', t - client.subscribeSentAt);
    }
    if (Number.isNaN(sentAt)) this.framesWithoutSentAt++;
    else {
      const cfg = this.cfg;
      if (this.msPerUnit === null) {
        const unit = guessTimeUnit(sentAt, t + cfg.wallOffsetMs);
        if (unit) {
          this.msPerUnit = MS_PER_UNIT[unit];
          this.sentAtUnit = unit;
        }
      }
      if (this.msPerUnit !== null) {
        const receivedWall = t + cfg.wallOffsetMs;
        const sentMs = sentAt * this.msPerUnit;
        const d = sentMs - receivedWall;
        if (d > this.maxSentMinusReceived) this.maxSentMinusReceived = d;
        const v = receivedWall - (sentMs - cfg.serverOffsetMs);
        if (v >= 0) this.latency.recordMs(v);
        else {
          this.latencyBelowZero.recordMs(-v);
          this.belowZero++;
        }
        const w = cfg.frameWindow;
        if (w && sentMs - cfg.serverOffsetMs >= w.startWallMs && sentMs - cfg.serverOffsetMs < w.endWallMs) {
          this.windowFrames++;
          if (v >= 0) this.windowLatency.recordMs(v);
          else {
            this.windowLatencyBelowZero.recordMs(-v);
            this.windowBelowZero++;
          }
        }
      }
    }
    // Without last_updated a frame names no update: it counts, but not for skew, loss or order.
    if (Number.isNaN(lastUpdated)) return;
    if (idx < 0) return;
    const prev = client.lastSeen[idx]!;
    if (prev === lastUpdated) {
      this.duplicates++;
      return;
    }
    // Only the first frame of an update shows the server's delay; a repeat only shows its age.
    if (this.msPerUnit !== null && !Number.isNaN(sentAt))
      this.serverLatency.recordMs((sentAt - lastUpdated) * this.msPerUnit);
    if (lastUpdated < prev) this.outOfOrder++;
    client.lastSeen[idx] = lastUpdated;
    const r = this.updates[idx]!;
    for (let k = 1; k <= r.size; k++) {
      const j = (r.head - k) & (RING - 1);
      if (r.lu[j] === lastUpdated) {
        if (t > r.last[j]!) r.last[j] = t;
        r.receivers[j]!++;
        return;
      }
    }
    if (r.size === RING) {
      this.evicted.push(updateRecord(r, this.codeNames[idx]!, (r.head - RING) & (RING - 1)));
      r.size--;
    }
    const j = r.head;
    r.lu[j] = lastUpdated;
    r.first[j] = t;
    r.last[j] = t;
    r.receivers[j] = 1;
    r.head = (j + 1) & (RING - 1);
    r.size++;
  }

  private takeUpdates(all: boolean, now: number): UpdateRecord[] {
    const out = this.evicted;
    this.evicted = [];
    const cutoff = now - this.cfg.updateWindowMs;
    for (let i = 0; i < this.updates.length; i++) drainRing(this.updates[i]!, this.codeNames[i]!, all, cutoff, out);
    return out;
  }
}
