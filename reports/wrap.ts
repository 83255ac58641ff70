/**
 * Lines fitted to a width: text wrapped at spaces with a hanging indent (wrap-ansi, so colour codes
 * take no room and wide characters take two), and a shell command broken between its words with a
 * trailing ` \`, so a curl line still runs when pasted.
 */
import wrapAnsi from 'wrap-ansi';

/** Columns a console line takes at most off a terminal. */
export const DEFAULT_WIDTH = 120;
/** Continuation lines are indented this much more than the line they continue. */
const HANG = 2;
/** The narrowest width text is wrapped to: below it, a word per line helps nobody. */
const MIN_WIDTH = 40;

const leadingSpaces = (s: string): string => /^ */.exec(s)![0];

/**
 * Characters of one line the console shows: about thirty rows. A target's body in a line (up to
 * 64 KiB of it) would fill screens and take wrap-ansi seconds per line; the reports keep it whole.
 */
export const MAX_LINE_CHARS = 4000;

/** `line` cut to MAX_LINE_CHARS, saying how much was left out and where it is. */
function bounded(line: string): string {
  if (line.length <= MAX_LINE_CHARS) return line;
  let kept = line.slice(0, MAX_LINE_CHARS);
  // Never end inside a colour code: a half escape would run into what follows.
  const esc = kept.lastIndexOf('\x1b');
  if (esc >= 0 && !/m/.test(kept.slice(esc))) kept = kept.slice(0, esc);
  return `${kept}… (${line.length - kept.length} more characters: the JSON or HTML report holds the whole line)`;
}

/**
 * `line` as lines of at most `width` columns, continuation lines indented by two more than the
 * first; a word longer than a line is cut across rows, and a line past MAX_LINE_CHARS is cut short.
 */
export function fitLine(whole: string, width = DEFAULT_WIDTH): string[] {
  const w = Math.max(MIN_WIDTH, width);
  const line = bounded(whole);
  if (line.length <= w && !line.includes('\x1b')) return [line];
  const lead = leadingSpaces(line);
  const room = w - lead.length - HANG;
  if (room < MIN_WIDTH / 2) return wrapAnsi(line, w, { hard: true, trim: false }).split('\n');
  const rows = wrapAnsi(line.slice(lead.length), room, { hard: true }).split('\n');
  return rows.map((row, i) => `${lead}${i === 0 ? '' : ' '.repeat(HANG)}${row}`);
}

/**
 * A shell command's words: runs of single-quoted strings, escaped characters and other non-space
 * characters (`'it'\''s'` is one word), or undefined when the command does not split cleanly.
 */
function shellWords(command: string): string[] | undefined {
  const words = command.match(/(?:'[^']*'|\\.|[^\s'\\])+/g) ?? [];
  return words.join(' ') === command.trim().replace(/\s+/g, ' ') ? words : undefined;
}

/** Words with a one-letter option joined to the argument after it (`-H 'accept: …'`), kept on one line. */
function withArguments(words: readonly string[]): string[] {
  const units: string[] = [];
  for (let i = 0; i < words.length; i++) {
    const next = words[i + 1];
    if (/^-[A-Za-z]$/.test(words[i]!) && next !== undefined && !next.startsWith('-')) {
      units.push(`${words[i]} ${next}`);
      i++;
    } else units.push(words[i]!);
  }
  return units;
}

/**
 * A shell command (a curl line) as lines of at most `width` columns, broken between words with a
 * trailing ` \` and the rest indented, so it still runs when pasted. A word longer than a line
 * (a very long URL) stands alone on its line, whole.
 */
export function fitShellLine(line: string, width = DEFAULT_WIDTH): string[] {
  const w = Math.max(MIN_WIDTH, width);
  if (line.length <= w) return [line];
  const lead = leadingSpaces(line);
  const words = shellWords(line.slice(lead.length));
  // Quotes that do not pair up cannot be broken safely: the text is wrapped as prose instead.
  if (!words) return fitLine(line, w);
  const rows: string[] = [];
  let row = lead;
  for (const word of withArguments(words)) {
    const sep = row.trim() === '' ? '' : ' ';
    if (row.trim() !== '' && row.length + sep.length + word.length + 2 > w) {
      rows.push(`${row} \\`);
      row = `${lead}${' '.repeat(HANG * 2)}${word}`;
    } else row += `${sep}${word}`;
  }
  rows.push(row);
  return rows;
}

/** `line` cut to `width` columns, its end shown as `…`. */
export function cutLine(line: string, width = DEFAULT_WIDTH): string {
  const w = Math.max(MIN_WIDTH, width);
  return line.length <= w ? line : `${line.slice(0, w - 1)}…`;
}

/**
 * Every line of `lines` fitted to `width`: shell commands by `fitShellLine`, the rest by `fitLine`;
 * with `cutReplies`, a reply under a reproduction (`-> HTTP 200 {…}`) is cut to one line instead,
 * its whole body being in the reports.
 */
export function fitLines(lines: readonly string[], width = DEFAULT_WIDTH, cutReplies = false): string[] {
  return lines.flatMap((l) =>
    /^\s*curl /.test(l)
      ? fitShellLine(l, width)
      : cutReplies && /^\s*-> /.test(l)
        ? [cutLine(l, width)]
        : fitLine(l, width),
  );
}
