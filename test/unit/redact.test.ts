/**
 * Redaction: a key is replaced where it travels (header values, URLs, query strings, frame and
 * body text), matched as a whole token, and never inside an id, a title or a word; a short key is
 * warned about and still never shown where it was sent.
 */
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_CONFIG, startReferenceServer, type ReferenceServer } from '../../reference/index.ts';
import type { JsonReport } from '../../reports/json.ts';
import { CHECKS } from '../../suites/index.ts';
import { API_KEY_HEADER } from '../../src/spec.ts';
import { createRedactor, maskKeys, redactedLabel } from '../../src/redact.ts';
import { conform, type Run } from '../helpers/conform-cli.ts';

const label = redactedLabel('primary');

describe('the redactor', () => {
  it('replaces a one-character key in a header value, a query string and a JSON string, and nowhere else', () => {
    const redact = createRedactor({ primary: 'x' });
    expect(redact('x-api-key: x')).toBe(`x-api-key: ${label}`);
    expect(redact('GET /v1/quotes?apikey=x&pair=BTC')).toBe(`GET /v1/quotes?apikey=${label}&pair=BTC`);
    expect(redact('{"key":"x"}')).toBe(`{"key":"${label}"}`);
    expect(redact('Expected ws.subscribe.max-pairs to answer 0x1f')).toBe(
      'Expected ws.subscribe.max-pairs to answer 0x1f',
    );
  });

  it('leaves an id alone when the key is a piece of it, and replaces the key standing alone beside it', () => {
    const redact = createRedactor({ primary: 'price' });
    const text = 'rest.price.mid failed: body {"message":"invalid key price"} (rest.price.schema)';
    expect(redact(text)).toBe(`rest.price.mid failed: body {"message":"invalid key ${label}"} (rest.price.schema)`);
  });

  it('replaces a key inside a URL, plain and URL-encoded, in the path and in the query', () => {
    const key = 'k3y+with/slash=';
    const redact = createRedactor({ primary: key });
    const encoded = encodeURIComponent(key);
    expect(redact(`wss://h/v1/ws?key=${encoded}&x=1`)).toBe(`wss://h/v1/ws?key=${label}&x=1`);
    expect(redact(`https://h/keys/${encoded}/usage`)).toBe(`https://h/keys/${label}/usage`);
    expect(redact(`curl -H 'x-api-key: ${key}' 'https://h/v1/pairs'`)).toBe(
      `curl -H 'x-api-key: ${label}' 'https://h/v1/pairs'`,
    );
  });

  it('replaces the longer of two keys whole when one key begins with the other', () => {
    const redact = createRedactor({ primary: 'abc-123', secondary: 'abc-123-extra' });
    expect(redact('abc-123-extra abc-123')).toBe(`${redactedLabel('secondary')} ${label}`);
  });

  it('leaves no half of a long key behind when the text was cut inside it', () => {
    const key = 'sk-0123456789abcdef0123';
    const redact = createRedactor({ primary: key });
    expect(redact(`token ${key.slice(0, 15)}`)).not.toContain(key.slice(0, 11));
    expect(redact(`${key.slice(6)} trailing`)).not.toContain(key.slice(11));
  });

  it('replaces a long key even where a target ran it into other characters', () => {
    const key = 'sk_live_0123456789abcdef';
    const redact = createRedactor({ primary: key });
    expect(redact(`xx${key}yy Pong!${key}`)).toBe(`xx${label}yy Pong!${label}`);
  });

  it('masks keys given to a transport as whole tokens only', () => {
    const mask = maskKeys(['ab'], '[redacted]');
    expect(mask('tab ab "ab" ab-c')).toBe('tab [redacted] "[redacted]" ab-c');
  });
});

describe('a run whose key is one character long', () => {
  let server: ReferenceServer;
  let dir: string;
  let run: Run;
  let files: Record<string, string>;

  beforeAll(async () => {
    // A fault, so failures carry their evidence (requests, curl lines) into every report.
    server = await startReferenceServer({
      fault: 'price-not-mid',
      config: { keys: { ...DEFAULT_CONFIG.keys, primary: { key: 'x', connections: 8 } } },
    });
    dir = await mkdtemp(path.join(os.tmpdir(), 'conform-redact-'));
    run = await conform(
      [
        '--target',
        server.restUrl,
        '--ws',
        server.wsUrl,
        '--key',
        'x',
        '--report',
        'console,json,junit,html',
        '--out',
        dir,
        // A line per check, each of them whole: every id is printed where a label could land.
        '--verbose',
        // The keep-alive checks wait out whole windows and send the key as every other stream check does.
        '--skip',
        'slow',
      ],
      { COLUMNS: '10000' },
    );
    files = {};
    for (const f of await readdir(dir)) files[f] = await readFile(path.join(dir, f), 'utf8');
  }, 180_000);
  afterAll(async () => {
    await server?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('is warned about at start, without the key', () => {
    expect(run.stderr).toMatch(/warning: the primary key is shorter than 8 characters/);
    expect(run.stderr).not.toMatch(/(?<![A-Za-z0-9._~-])x(?![A-Za-z0-9._~-])/);
  });

  it('prints every check id intact and no label inside a word', () => {
    const ran = (JSON.parse(files['conform-report.json']!) as JsonReport).results.map((r) => r.id);
    // Every check but the disruptive ones and the explorer, which run only when asked for, and the
    // slow ones skipped here, and what discovery found.
    expect(ran.filter((id) => id !== 'discovery').length).toBe(
      CHECKS.filter((c) => !(['disruptive', 'explore', 'slow'] as const).some((t) => c.tags.includes(t))).length,
    );
    expect(ran).toContain('discovery');
    for (const id of ran)
      expect(run.stdout, id).toMatch(new RegExp(`^(PASS|FAIL|SKIP|ERROR) +${id.replace(/\./g, '\\.')} `, 'm'));
    // Every label stands where a whole token stood: never glued to letters of a word or an id.
    expect(run.stdout).not.toMatch(/[A-Za-z0-9.-]<key:|<key:primary>[A-Za-z0-9]/);
    expect(run.stdout).toContain('Expected');
  });

  it('shows the key as its label in every header that carried it, and in no report as a token', () => {
    const report = JSON.parse(files['conform-report.json']!) as JsonReport;
    const sent = report.results
      .flatMap((r) => r.evidence)
      .flatMap((e) =>
        e.kind === 'http' || e.kind === 'ws-open' ? [e.kind === 'http' ? e.request.headers : e.headers] : [],
      )
      .flatMap((h) => Object.entries(h).filter(([k]) => k.toLowerCase() === API_KEY_HEADER.toLowerCase()))
      .map(([, v]) => v);
    expect(sent.length).toBeGreaterThan(10);
    expect(run.stdout).toContain(`${API_KEY_HEADER}: ${label}`);
    // The other values are the invalid keys some checks send on purpose.
    expect(sent).toContain(label);
    expect(sent).not.toContain('x');
    expect(Object.keys(files).sort()).toEqual(['conform-junit.xml', 'conform-report.html', 'conform-report.json']);
    for (const [name, text] of [...Object.entries(files), ['stdout', run.stdout] as const]) {
      const alone = /(?<![A-Za-z0-9._~-])x(?![A-Za-z0-9._~-])/.exec(text);
      expect(alone && text.slice(alone.index - 60, alone.index + 60), name).toBeNull();
    }
  });
});
