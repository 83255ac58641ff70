/**
 * What the run has seen of pairs, shared by every check of the run: the listings it read, and the
 * pairs on the stream. A listing of `/v1/pairs` walked page by page costs a request per page, and a
 * large catalogue behind a rate limit takes minutes: it is read once per key and query, and every
 * check that walks it shares what the first read. `/v1/pairs` may list pairs that are inactive or
 * suspended (spec: Errors, 50104 "Pair does not exist, is inactive or is suspended"), and a pair's
 * price may never move on a service that pushes only on change: a check that needs a pair to
 * subscribe to, or a pair that pushes, prefers what an earlier check saw work, and no check picks
 * again a pair the target refused. (A ledger of the run, not to be taken for the spec's "Pair
 * record", an element of the data of /v1/pairs.)
 */
export class PairLedger {
  private readonly listings = new Map<string, unknown>();
  private readonly reading = new Map<string, Promise<unknown>>();

  /**
   * The listing named `name` (a key and a query): read by `read` the first time, then shared. A
   * check that asks while another reads it waits for that read; one that failed (it ended the check
   * that read) is read again by the next, in its own name, so each check meets its own failures.
   * Resolves with the listing and whether it was shared rather than read.
   */
  async listing<T>(name: string, read: () => Promise<T>): Promise<{ value: T; shared: boolean }> {
    if (this.listings.has(name)) return { value: this.listings.get(name) as T, shared: true };
    const pending = this.reading.get(name);
    if (pending) {
      const value = await pending.then(
        (v) => ({ v }),
        () => undefined,
      );
      if (value) return { value: value.v as T, shared: true };
    }
    const own = read();
    this.reading.set(name, own);
    try {
      const value = await own;
      this.listings.set(name, value);
      return { value, shared: false };
    } finally {
      if (this.reading.get(name) === own) this.reading.delete(name);
    }
  }

  private readonly acceptedPairs = new Set<string>();
  private readonly refusedPairs = new Map<string, string>();
  private readonly movedPairs = new Set<string>();

  /** A subscribe listing these pairs succeeded. */
  accepted(pairs: readonly string[]): void {
    for (const p of pairs) if (!this.refusedPairs.has(p)) this.acceptedPairs.add(p);
  }

  /** A subscribe naming `pair` was refused (`why`: the notice, in one line). */
  refused(pair: string, why: string): void {
    this.acceptedPairs.delete(pair);
    this.refusedPairs.set(pair, why);
  }

  /** The last price pushed of each pair, across the run's sessions. */
  private readonly lastPushed = new Map<string, string>();

  /** A push arrived: its pair was subscribed, and a price unlike the last one pushed is a move. */
  pushed(push: { code?: unknown; price?: unknown }): void {
    if (typeof push.code !== 'string' || typeof push.price !== 'string') return;
    const last = this.lastPushed.get(push.code);
    if (last !== undefined && last !== push.price) this.moved(push.code);
    this.lastPushed.set(push.code, push.price);
  }

  /** The pair's price was seen to change (two pushes, or two REST reads, that differ). */
  moved(pair: string): void {
    this.movedPairs.add(pair);
  }

  isAccepted(pair: string): boolean {
    return this.acceptedPairs.has(pair);
  }
  isRefused(pair: string): boolean {
    return this.refusedPairs.has(pair);
  }
  hasMoved(pair: string): boolean {
    return this.movedPairs.has(pair);
  }

  /**
   * `pairs` without those refused, those seen to move and accepted first, then those accepted,
   * each group in its given order (a catalogue's order still decides among equals).
   */
  prefer(pairs: readonly string[]): string[] {
    const rank = (p: string): number => (this.movedPairs.has(p) ? 0 : this.acceptedPairs.has(p) ? 1 : 2);
    return pairs
      .filter((p) => !this.refusedPairs.has(p))
      .map((p, i) => ({ p, i }))
      .sort((x, y) => rank(x.p) - rank(y.p) || x.i - y.i)
      .map((x) => x.p);
  }
}
