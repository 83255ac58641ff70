/**
 * Keys a load run spreads its clients over, and how: pure and import-free, so `conform load
 * fanout` and the k6 scripts (k6 is not Node) give client i the same key.
 */

export interface KeyAllowance {
  key: string;
  /** Connections the key allows; undefined = not known (the spec does not show it). */
  connections?: number;
}

/**
 * Parses a keys list in text: one `KEY` or `KEY,CONNECTIONS` a line, `#` starts a comment.
 * Returns the keys, or the 1-based number of the first bad line.
 */
export function parseKeyLines(text: string): { keys: KeyAllowance[] } | { badLine: number } {
  const keys: KeyAllowance[] = [];
  for (const [i, raw] of text.split('\n').entries()) {
    const line = raw.replace(/#.*/, '').trim();
    if (!line) continue;
    const [key, c] = line.split(',').map((s) => s.trim());
    const connections = c ? Number(c) : undefined;
    if (!key || (connections !== undefined && !(Number.isInteger(connections) && connections > 0)))
      return { badLine: i + 1 };
    keys.push(connections === undefined ? { key } : { key, connections });
  }
  return { keys };
}

/** Connections the keys allow together (Infinity when one states no allowance). */
export function totalAllowance(keys: readonly KeyAllowance[]): number {
  return keys.reduce((n, k) => n + (k.connections ?? Number.POSITIVE_INFINITY), 0);
}

/**
 * Gives each of `clients` a key, filling each key up to its allowance in order; keys with no
 * stated allowance share the rest evenly. The caller checks totalAllowance first.
 */
export function assignKeyList(clients: number, keys: readonly KeyAllowance[]): string[] {
  const out: string[] = [];
  const limited = keys.filter((k) => k.connections !== undefined);
  const open = keys.filter((k) => k.connections === undefined);
  for (const k of limited) for (let i = 0; i < k.connections! && out.length < clients; i++) out.push(k.key);
  for (let i = 0; out.length < clients && open.length; i++) out.push(open[i % open.length]!.key);
  return out;
}
