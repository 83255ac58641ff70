/**
 * How a stream connection is admitted, whatever its transport: the key it names, the refusals of
 * the HTTP phase as JSON bodies, and the per-key connection allowance, counted across raw
 * WebSocket and Socket.IO.
 */
import { STATUS_CODES, type IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { STATUS, type RestStatus } from '../src/spec.ts';
import type { KeyRecord, Refusal } from './model.ts';
import { messageOf, type Service } from './service.ts';

/** A handshake the service accepted: the key and the connection slot it holds. */
export interface Admission {
  readonly key: KeyRecord;
  readonly countKey: string;
  /** Admitted without a valid key, to be told 50005 after connecting (a dialect's choice). */
  readonly unauthorized?: boolean;
  /** Frees the slot; safe to call more than once. */
  release(): void;
}

export type { Refusal } from './model.ts';

const refusal = (status: RestStatus, message = messageOf(status)): Refusal => ({ status, message });

/** The admissions of one service: the open connections of each key. */
export class Admissions {
  private readonly counts = new Map<string, number>();

  /** `refused`: the count of refusals by status number, kept up to date here. */
  constructor(
    private readonly svc: Service,
    private readonly refused: Record<string, number>,
  ) {}

  /**
   * Decides a stream handshake of either transport before the upgrade: the refusal, or the key
   * with one slot of its allowance taken.
   */
  admit(req: IncomingMessage, remoteAddress: string): Admission | Refusal {
    const svc = this.svc;
    const key = svc.caller(req, 'stream');
    // Spec, Authentication 3: failures before the connection is established come back in the
    // HTTP handshake as a JSON body with status_number and message.
    if (!key) {
      if (svc.seams.admission.unauthorized(svc.dialect.stream.unauthorized) === 'handshake')
        return refusal(STATUS.UNAUTHORIZED);
      // Spec, Authentication 4: after connection an absent or invalid key yields a 50005 notice.
      // Such a connection holds no key's slot: it is closed right after the notice.
      return {
        key: { name: 'unauthorized', key: '\u0000unauthorized', stream: true },
        countKey: '\u0000unauthorized',
        unauthorized: true,
        release: () => {},
      };
    }
    const refused = svc.seams.admission.refusal(this.refusalFor(key), { key });
    if (refused) return refused;
    // Spec, Limits: counted per key, not per IP address; refused from any address.
    const slot = svc.seams.admission.slot(
      { countKey: key.key, allowance: key.connections ?? 1, freed: true, refusalHoldsMs: 0 },
      { key, remoteAddress },
    );
    const { countKey } = slot;
    const open = this.counts.get(countKey) ?? 0;
    const alongside = (slot.countsWith ?? []).reduce((n, other) => n + (this.counts.get(other) ?? 0), 0);
    if (open + alongside >= slot.allowance) {
      if (slot.refusalHoldsMs > 0) this.hold(countKey, slot.refusalHoldsMs);
      return refusal(STATUS.CONNECTION_LIMIT);
    }
    this.counts.set(countKey, open + 1);
    let released = !slot.freed;
    const free = (): void => {
      this.counts.set(countKey, (this.counts.get(countKey) ?? 1) - 1);
    };
    // How long a closed connection keeps its slot is not shown: the dialect chooses.
    const delay = svc.dialect.keys.slotReleaseMs;
    const release = (): void => {
      if (released) return;
      released = true;
      if (delay > 0) setTimeout(free, delay).unref();
      else free();
    };
    return { key, countKey, release };
  }

  /** Counts one connection more of `countKey` for `ms` (Infinity: for good), as if a refused handshake held a slot. */
  private hold(countKey: string, ms: number): void {
    this.counts.set(countKey, (this.counts.get(countKey) ?? 0) + 1);
    if (ms === Number.POSITIVE_INFINITY) return;
    setTimeout(() => this.counts.set(countKey, (this.counts.get(countKey) ?? 1) - 1), ms).unref();
  }

  /** The refusal of a valid key's handshake for its state or access; undefined when it may connect. */
  private refusalFor(key: KeyRecord): Refusal | undefined {
    if (key.state === 'suspended') return refusal(STATUS.SUSPENDED);
    if (key.state === 'restricted') return refusal(STATUS.RESTRICTED_USER);
    if (key.state === 'stream-maintenance') return refusal(STATUS.WS_MAINTENANCE);
    if (key.stream === false) return refusal(STATUS.ACCESS_DENIED, 'Access denied: no access to the V1 source stream');
    return undefined;
  }

  /** The HTTP response of a refused handshake: status and JSON body (counted). */
  response(refused: Refusal): { http: number; body: string } {
    const { status, message } = refused;
    this.refused[status] = (this.refused[status] ?? 0) + 1;
    const wire = this.svc.wire;
    const body = wire.text(this.svc.seams.admission.body({ status_number: status, message }, { refusal: refused }));
    return { http: wire.handshakeHttp(status), body };
  }

  /** Writes a refusal in place of the upgrade and ends the socket. */
  refuse(socket: Duplex, refused: Refusal): void {
    const { http, body } = this.response(refused);
    socket.end(
      `HTTP/1.1 ${http} ${STATUS_CODES[http] ?? ''}\r\nContent-Type: application/json; charset=utf-8\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  }
}
