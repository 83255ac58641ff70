/**
 * Every place a check can fail (src/judgements.ts) as Markdown, for docs/judgements.md
 * (scripts/gen-judgements.ts): the checks by channel, each with the statements it fails on, then
 * the engine's findings and the checks that own them.
 */
import type { EngineJudgement, Judgement } from '../src/judgements.ts';
import type { RuleOwners } from '../src/ownership.ts';
import { statement } from '../src/statements.ts';

/** Text for a Markdown table cell: one line, no pipe to break the table. */
const cell = (text: string): string => text.replace(/\s+/g, ' ').replace(/\|/g, '\\|');

const said = (key: string): string => {
  const st = statement(key);
  return st ? `${st.section}, ${st.item}: ${st.statement}` : '(no statement)';
};

function checkTable(rows: readonly Judgement[]): string[] {
  const out = ['| check | fails on | statement | the spec states |', '|---|---|---|---|'];
  for (const j of rows)
    out.push(
      `| ${j.kind === 'own' ? `\`${j.check}\`` : ''} ` +
        `| ${cell(j.kind === 'own' ? `its own judgement: ${j.expects}` : j.expects)} ` +
        `| \`${j.statement}\` | ${cell(said(j.statement))} |`,
    );
  return out;
}

function engineTable(engine: readonly EngineJudgement[], owners: RuleOwners): string[] {
  const out = ['| where | what | statement | fails |', '|---|---|---|---|'];
  for (const e of engine) {
    if (e.statements.length === 0) {
      out.push(`| \`${e.where}\` | ${cell(e.what)} | the field's statement | its owner, listed above |`);
      continue;
    }
    e.statements.forEach((key, i) => {
      const who = [owners.ownerOf(key, 'rest'), owners.ownerOf(key, 'stream')].filter(Boolean);
      out.push(
        `| ${i === 0 ? `\`${e.where}\`` : ''} | ${i === 0 ? cell(e.what) : ''} | \`${key}\` | ` +
          `${who.length ? who.map((id) => `\`${id}\``).join(', ') : 'the check that met it'} |`,
      );
    });
  }
  return out;
}

/** The Markdown of docs/judgements.md under `header`. */
export function judgementsMarkdown(
  rows: readonly Judgement[],
  engine: readonly EngineJudgement[],
  owners: RuleOwners,
  header: string,
): string {
  const rest = rows.filter((j) => j.channel === 'rest' && !j.check.startsWith('ws.'));
  const stream = rows.filter((j) => !rest.includes(j));
  const failing = new Set(rows.map((j) => `${j.check} ${j.statement}`)).size;
  return [
    header.trimEnd(),
    '',
    `${failing} places a check can fail, over ${new Set(rows.map((j) => j.check)).size} checks.`,
    '',
    '## REST checks',
    '',
    ...checkTable(rest),
    '',
    '## Stream checks',
    '',
    ...checkTable(stream),
    '',
    "## The engine's findings",
    '',
    ...engineTable(engine, owners),
    '',
  ].join('\n');
}
