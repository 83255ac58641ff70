/**
 * The load tools against a service behind a private CA (the reference over HTTPS and WSS, its
 * certificate signed by the throw-away CA of test/helpers/tls/ca/): without the CA a run stops with
 * exit 2 and one line naming the host and the reason, before any load; with `--ca FILE` the fan-out
 * (over wss, in its worker threads) and the REST load (over https) run through it.
 */
import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startReferenceServer, type ReferenceServer } from '../../reference/index.ts';
import { conform } from '../helpers/conform-cli.ts';

const fixture = (name: string): string => new URL(`../helpers/tls/ca/${name}`, import.meta.url).pathname;
const CA = fixture('ca.pem');

let server: ReferenceServer;
beforeAll(async () => {
  server = await startReferenceServer({
    tls: { cert: await readFile(fixture('leaf.pem')), key: await readFile(fixture('leaf-key.pem')) },
  });
});
afterAll(() => server?.close());

describe('conform load against a target behind a private CA', () => {
  it('stops without the CA, in one line naming the host and the reason, before any load', async () => {
    const r = await conform(['load', 'rest', '--target', server.restUrl, '--rate', '5', '--duration', '1s'], {
      CONFORM_API_KEY: server.profile.keys.primary.key,
    });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(
      new RegExp(
        /^conform: TLS: the certificate of 127\.0\.0\.1:\d+ fails verification: [^\n]+ \([A-Z_]+\); /.source +
          /give the CA that signs it with --ca FILE or the profile's tls\.ca\n$/.source,
      ),
    );
  });

  it('lets the load tools through: fan-out over wss and REST over https', async () => {
    const env = { CONFORM_API_KEY: server.profile.keys.primary.key };
    const target = ['--target', server.restUrl, '--ca', CA, '--duration', '1s', '--report', 'console'];
    const fanout = await conform(
      ['load', 'fanout', ...target, '--ws', server.wsUrl, '--clients', '2', '--workers', '1'],
      env,
    );
    expect(fanout.stderr).toBe('');
    expect(fanout.stdout).toMatch(/connected 2\/2/);
    expect(fanout.code).toBe(0);
    const rest = await conform(['load', 'rest', ...target, '--rate', '10'], env);
    expect(rest.stderr).toBe('');
    expect(rest.code).toBe(0);
  });
});
