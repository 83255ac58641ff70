/** JUnit XML: one testcase per check, `<failure>` / `<error>` / `<skipped>` with the evidence. */
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { CheckResult } from '../src/check.ts';
import type { RunEvent, RunHandler } from '../src/runner.ts';
import { causesHeadline, causesOf } from './causes.ts';
import {
  causeLines,
  clauseText,
  coverageLine,
  failureLines,
  nothingToJudgeLine,
  ruleLine,
  uncheckedLines,
  valueText,
  verdictWord,
  explorationLines,
} from './format.ts';

export const JUNIT_REPORT_FILE = 'conform-junit.xml';

// XML 1.0 forbids most control characters even escaped; bodies from a target may carry them.
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point
const INVALID_XML = /[^\x09\x0A\x0D\x20-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu;

/** Escapes text for an XML attribute or element. */
export function xml(text: string): string {
  return text
    .replace(INVALID_XML, '\uFFFD')
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&apos;');
}

const seconds = (ms: number): string => (ms / 1000).toFixed(3);

function testcase(r: CheckResult): string {
  const classname = r.id.split('.').slice(0, 2).join('.');
  const open =
    `    <testcase classname="${xml(classname)}" name="${xml(`${r.id}: ${r.title}`)}" ` +
    `time="${seconds(r.durationMs)}">`;
  const body: string[] = [];
  if (r.outcome === 'fail') {
    const first = r.violations[0];
    body.push(
      `      <failure message="${xml(first ? first.received : 'failed')}" ` +
        `type="${xml(r.severity)}">${xml(failureLines(r).join('\n'))}</failure>`,
    );
  } else if (r.outcome === 'error') {
    body.push(
      `      <error message="${xml(r.reason ?? 'error')}" ` +
        `type="${xml(r.errorCode ?? 'error')}">${xml(failureLines(r).join('\n'))}</error>`,
    );
  } else if (r.outcome === 'skip') {
    body.push(`      <skipped message="${xml(r.reason ?? 'skipped')}"/>`);
  }
  const out = [`spec: ${clauseText(r)}`, `expected: ${r.expectation}`];
  for (const o of r.observations) out.push(`observed ${o.name}: ${valueText(o.value)}${o.note ? ` (${o.note})` : ''}`);
  if (r.outcome !== 'fail') out.push(...explorationLines(r));
  body.push(`      <system-out>${xml(out.join('\n'))}</system-out>`);
  return [open, ...body, '    </testcase>'].join('\n');
}

/** The whole JUnit document; suites are the check areas (`rest`, `ws`). */
export function junitXml(e: Extract<RunEvent, { type: 'run-end' }>): string {
  const groups = new Map<string, CheckResult[]>();
  for (const r of e.results) {
    const area = r.id.split('.')[0]!;
    groups.set(area, [...(groups.get(area) ?? []), r]);
  }
  const count = (rs: CheckResult[], o: string): number => rs.filter((r) => r.outcome === o).length;
  // The run's coverage on every suite, so a CI view of any one of them shows it.
  const cov = e.summary.coverage;
  const starved = nothingToJudgeLine(cov);
  const causes = causesHeadline(e.results, causesOf(e.results));
  const properties = [
    '    <properties>',
    ...(causes ? [`      <property name="causes" value="${xml(causes)}"/>`] : []),
    `      <property name="verdict" value="${xml(verdictWord(e.summary))}"/>`,
    `      <property name="rules" value="${xml(ruleLine(cov))}"/>`,
    `      <property name="coverage" value="${xml(coverageLine(cov))}"/>`,
    ...(starved ? [`      <property name="nothing-to-judge" value="${xml(starved)}"/>`] : []),
    '    </properties>',
  ];
  const suiteOut =
    `    <system-out>${xml(
      [
        ...causeLines(e.results, causesOf(e.results)),
        ruleLine(cov),
        `Checks: ${coverageLine(cov)}`,
        ...(starved ? [starved] : []),
        ...uncheckedLines(cov.rules).map((l) => `not checked in full: ${l}`),
      ].join('\n'),
    )}` + `</system-out>`;
  const suites = [...groups].map(([area, rs]) => {
    const time = rs.reduce((t, r) => t + r.durationMs, 0);
    return [
      `  <testsuite name="conform.${xml(area)}" tests="${rs.length}" failures="${count(rs, 'fail')}" ` +
        `errors="${count(rs, 'error')}" skipped="${count(rs, 'skip')}" time="${seconds(time)}" ` +
        `timestamp="${xml(e.startedAt.replace(/Z$/, ''))}">`,
      ...properties,
      ...rs.map(testcase),
      suiteOut,
      '  </testsuite>',
    ].join('\n');
  });
  const s = e.summary;
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="conform" tests="${s.total}" failures="${s.fail}" errors="${s.error}" ` +
      `skipped="${s.skip}" time="${seconds(s.durationMs)}">`,
    ...suites,
    '</testsuites>',
    '',
  ].join('\n');
}

/** Writes `conform-junit.xml` into `outDir` when the run ends. */
export function junitHandler(outDir: string, written: (file: string) => void = () => {}): RunHandler {
  return {
    async handle(e) {
      if (e.type !== 'run-end') return;
      await mkdir(outDir, { recursive: true });
      const file = path.join(outDir, JUNIT_REPORT_FILE);
      await writeFile(file, junitXml(e));
      written(file);
    },
  };
}
