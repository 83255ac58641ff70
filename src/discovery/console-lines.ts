/** What a user sees of a discovery on the console, once it has run. */
import type { Redact } from '../redact.ts';
import type { Discovery } from './model.ts';

/** The lines a user sees of a discovery (after the candidate lines printed as it went). */
export function discoveryLines(d: Discovery, redact: Redact): string[] {
  const lines: string[] = [];
  if (d.stream)
    lines.push(
      `stream: ${redact(d.stream.url)} (${d.stream.transport}` +
        `${d.stream.event ? `, event ${JSON.stringify(d.stream.event)}` : ''}` +
        `${d.stream.namespace ? `, namespace ${d.stream.namespace}` : ''})` +
        `${d.stream.given ? '' : ` — ${d.stream.how}`}`,
    );
  else if (d.streamGap) lines.push(d.streamGap);
  if (d.allowance)
    lines.push(
      `allowance: ${
        d.allowance.source === 'found' ? d.allowance.connections : (d.allowance.note ?? d.allowance.source)
      }` + ' stream connection(s) per key',
    );
  const pairs = d.profile.pairs ?? {};
  lines.push(
    `pairs: ${pairs.sample?.length ?? 0} in the sample; stale ${pairs.stale ?? 'none found'}; ` +
      `refusing a subscribe ${pairs.inactive ?? 'none found'}`,
  );
  lines.push(`provoked with one key: ${d.provoked.join(', ') || 'none'}`);
  lines.push(
    `discovery: ${d.durationMs} ms, ${d.connections.opened} stream connection(s), ` +
      `at most ${d.connections.mostAtOnce} at once`,
  );
  return lines;
}
