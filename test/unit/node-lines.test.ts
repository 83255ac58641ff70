/**
 * One set of Node lines everywhere: package.json `engines`, the versions scripts/install-node.sh
 * pins (CI's Node and test:full's matrix), the workflows, the Dockerfile, the CI recipes and what
 * README.md and CONTRIBUTING.md tell a newcomer; and no package of the lock refuses a pinned
 * version, so `npm ci` on them prints no EBADENGINE (test/full/node-lines.test.ts runs it).
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import semver from 'semver';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/conform-cli.ts';
import { nodeLines } from '../helpers/node-lines.ts';

const read = (file: string): string => readFileSync(path.join(ROOT, file), 'utf8');
const pkg = JSON.parse(read('package.json')) as { engines: { node: string } };
const lock = JSON.parse(read('package-lock.json')) as {
  packages: Record<string, { engines?: { node?: string } | string[] }>;
};
const lines = nodeLines();
const majors = lines.map((l) => l.line);

describe('the supported Node lines', () => {
  it('are 22 and 24, each pinned to a version of its own line that package.json engines admits', () => {
    expect(majors).toEqual(['22', '24']);
    for (const { line, version } of lines) {
      expect(semver.major(version), version).toBe(Number(line));
      expect(semver.satisfies(version, pkg.engines.node), `${version} in ${pkg.engines.node}`).toBe(true);
    }
    // Node 20 reached its end of life and the development tools need 22.19: engines says so.
    expect(semver.intersects(pkg.engines.node, '^20.0.0')).toBe(false);
    expect(semver.satisfies('22.18.0', pkg.engines.node)).toBe(false);
  });

  it('satisfy the engines of every package in the lock, so npm ci warns of none', () => {
    const refused = Object.entries(lock.packages).flatMap(([name, entry]) => {
      const range = Array.isArray(entry.engines) ? undefined : entry.engines?.node;
      if (!range) return [];
      return lines.filter((l) => !semver.satisfies(l.version, range)).map((l) => `${name} (${range}) on ${l.version}`);
    });
    expect(refused).toEqual([]);
  });

  it('are the matrix of the CI workflow, and the Node of the nightly jobs, the image and the CI recipes', () => {
    expect(read('.github/workflows/ci.yml')).toMatch(
      new RegExp(`node: \\[${majors.map((m) => `'${m}'`).join(', ')}\\]`),
    );
    expect(read('.github/workflows/ci.yml')).toMatch(/CONFORM_NODE_LINE: \$\{\{ matrix\.node \}\}/);
    const named = [
      ['.github/workflows/full.yml', /container: node:(\d+)-bookworm/],
      ['.github/workflows/nightly-load.yml', /node-version: (\d+)/],
      ['docs/ci/github-actions.yml', /node-version: (\d+)/],
      ['docs/ci/gitlab-ci.yml', /image: node:(\d+)/],
    ] as const;
    for (const [file, re] of named) expect(majors, file).toContain(re.exec(read(file))?.[1]);
    for (const m of read('Dockerfile').matchAll(/^FROM node:(\d+)-slim/gm)) expect(majors).toContain(m[1]);
    expect(read('.ci/run')).toMatch(/scripts\/install-node\.sh "\$\{CONFORM_NODE_LINE:-22\}"/);
  });

  it('are the ones README.md and CONTRIBUTING.md name', () => {
    const oldest = semver.minVersion(pkg.engines.node)!;
    const phrase = `Node ${majors[0]} (${oldest.major}.${oldest.minor} or later) or ${majors.slice(1).join(' or ')}`;
    expect(read('README.md')).toContain(phrase);
    expect(read('CONTRIBUTING.md')).toContain(phrase);
    for (const file of ['README.md', 'CONTRIBUTING.md']) expect(read(file), file).not.toMatch(/Node 20\+/);
  });
});
