/**
 * `conform load calibrate`: the generator's own floor. Runs the same fan-out measurement at the
 * same N and rate against a trivial in-process broadcast server, so what the report shows is
 * what the generator adds by itself (latency, CPU per frame, saturation).
 */
import { runFanout, type FanoutOptions, type FanoutReport } from '../fanout/run.ts';
import { startBroadcastServer } from './broadcast-server.ts';

export interface CalibrateOptions extends Omit<FanoutOptions, 'pair'> {
  /** Push interval of the broadcast server; default 100 ms (10 Hz per pair). */
  pushIntervalMs?: number;
}

/** Runs fan-out against the broadcast server; the report is a fan-out report of the floor. */
export async function runCalibrate(options: CalibrateOptions = {}): Promise<FanoutReport> {
  const server = await startBroadcastServer({ tickMs: options.pushIntervalMs ?? 100 });
  try {
    const pairs = Array.from({ length: options.pairs ?? 10 }, (_, i) => `Crypto:ALL:CAL${i}/USD`);
    const { pushIntervalMs: _interval, ...fanout } = options;
    const report = await runFanout(server.target, { ...fanout, pair: pairs });
    report.mode = 'calibrate';
    report.observations.unshift(
      "calibration: trivial in-process broadcast server; these figures are the generator's own floor",
    );
    return report;
  } finally {
    await server.close();
  }
}
