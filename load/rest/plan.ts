/** What both REST load models are given: the target, the requests, the phases, the callbacks. */
export interface RestPlan {
  /** Protocol, host and port of the target. */
  origin: string;
  /** Request paths (with query), used in turn. */
  paths: readonly string[];
  headers: Record<string, string>;
  /** Open model: most connections opened; closed model: connections sending back to back. */
  connections: number;
  warmupMs: number;
  durationMs: number;
  timeoutMs: number;
  /** Each response's HTTP status and body, measured phase only. */
  onResponse?: (status: number, body: string) => void;
  onSecond?: (p: { elapsedS: number; requests: number; rps: number }) => void;
}
