/**
 * What a target's TLS certificate is verified against: Node's own CA certificates (with
 * NODE_EXTRA_CA_CERTS), plus those of the PEM file `--ca FILE` or the profile's `tls.ca` names, for a
 * service behind a company CA. Every transport of a run (REST, the stream, the probes, discovery)
 * takes the same. Verification is never turned off: a certificate that fails it stops the run with
 * one line naming the host and the reason.
 */
import { readFileSync } from 'node:fs';
import https from 'node:https';
import tls from 'node:tls';
import { CertificateError, UsageError } from '../errors.ts';
import type { Profile } from '../profile.ts';
import { REST_IDLE_SOCKET_MS } from '../timing/index.ts';

/** The CA certificates to trust beside Node's own, as PEM text; undefined for Node's own only. */
export type TrustedCa = string | undefined;

const CERTIFICATE = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g;
const read = new Map<string, string>();

/**
 * The certificates of a CA file, as PEM text, read once per file; throws UsageError naming
 * `option` when the file cannot be read or holds no PEM certificate.
 */
export function readCaFile(file: string, option: string): string {
  const known = read.get(file);
  if (known) return known;
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new UsageError(`${option}: cannot read ${file} (${(err as NodeJS.ErrnoException).code ?? String(err)})`);
  }
  const certificates = text.match(CERTIFICATE);
  if (!certificates) throw new UsageError(`${option}: ${file} holds no PEM certificate (-----BEGIN CERTIFICATE-----)`);
  const pem = certificates.join('\n');
  read.set(file, pem);
  return pem;
}

/** The CA certificates a profile's `tls.ca` names (resolved to a path by `resolveTarget`), or undefined. */
export const caOf = (profile: Pick<Profile, 'tls'>): TrustedCa =>
  profile.tls?.ca ? readCaFile(profile.tls.ca, 'tls.ca') : undefined;

/**
 * The options of a TLS connection that trusts `ca` beside Node's own certificates, and verifies
 * whatever the environment says: NODE_TLS_REJECT_UNAUTHORIZED=0 changes only a default, and this
 * sets it.
 */
export function caOption(ca: TrustedCa): { ca?: string[]; rejectUnauthorized: true } {
  const list = caCertificates(ca);
  return list ? { ca: list, rejectUnauthorized: true } : { rejectUnauthorized: true };
}

/** The `ca` list of a TLS connection that trusts `ca` beside Node's own; undefined for Node's own only. */
export function caCertificates(ca: TrustedCa): string[] | undefined {
  if (!ca) return undefined;
  // Node's `ca` replaces its default list: the defaults are given back first, so a public
  // certificate still verifies. Node before 22.15 has no getCACertificates: its bundled roots then.
  const defaults = tls.getCACertificates?.('default') ?? tls.rootCertificates;
  return [...defaults, ...(ca.match(CERTIFICATE) ?? [])];
}

const agents = new Map<string, https.Agent>();

/**
 * The keep-alive agent of HTTPS requests that trust `ca`: one per CA, shared by the run's requests
 * as the default agent is (idle sockets dropped after a second, before a server's own timeout).
 */
export function httpsAgent(ca: TrustedCa, fallback: https.Agent): https.Agent {
  if (!ca) return fallback;
  let agent = agents.get(ca);
  if (!agent) {
    agent = new https.Agent({ keepAlive: true, timeout: REST_IDLE_SOCKET_MS, ...caOption(ca) });
    agents.set(ca, agent);
  }
  return agent;
}

/**
 * The codes Node gives a certificate that fails verification (OpenSSL's verify errors and its own
 * host-name check), as opposed to a connection that failed for another reason.
 */
export function isCertificateFailure(code: string | undefined): boolean {
  if (!code) return false;
  return (
    code === 'ERR_TLS_CERT_ALTNAME_INVALID' ||
    /^(CERT_|UNABLE_TO_|SELF_SIGNED_|DEPTH_ZERO_SELF_SIGNED_|INVALID_CA|PATH_LENGTH_EXCEEDED|HOSTNAME_MISMATCH)/.test(
      code,
    )
  );
}

/** The one line of a certificate that fails verification: the host, the reason, what to do. */
export function certificateProblem(origin: string, err: NodeJS.ErrnoException): CertificateError {
  return new CertificateError(
    `TLS: the certificate of ${origin} fails verification: ${err.message} (${err.code}); ` +
      "give the CA that signs it with --ca FILE or the profile's tls.ca",
  );
}

/**
 * One TLS handshake with the host of `url` (https: or wss:), its certificate verified against
 * `ca` and Node's own: resolves when it verifies, rejects with a CertificateError when it does not.
 * Any other failure (nothing listening, a timeout) resolves: reachability is for the caller to judge.
 */
export function verifyTls(url: string, ca: TrustedCa, timeoutMs: number): Promise<void> {
  const u = new URL(url);
  if (u.protocol !== 'https:' && u.protocol !== 'wss:') return Promise.resolve();
  const host = u.hostname.replace(/^\[|\]$/g, '');
  return new Promise<void>((resolve, reject) => {
    const socket = tls.connect({
      host,
      port: Number(u.port || 443),
      // SNI carries a name, never an address (RFC 6066 3).
      ...(/^[\d.:]+$/.test(host) ? {} : { servername: host }),
      ...caOption(ca),
    });
    const done = (err?: Error): void => {
      clearTimeout(timer);
      socket.destroy();
      if (err) reject(err);
      else resolve();
    };
    const timer = setTimeout(() => done(), timeoutMs);
    socket.once('secureConnect', () => done());
    socket.once('error', (err: NodeJS.ErrnoException) =>
      done(isCertificateFailure(err.code) ? certificateProblem(`${u.hostname}:${u.port || 443}`, err) : undefined),
    );
  });
}
