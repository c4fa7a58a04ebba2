import { readFileSync } from 'node:fs';
import { join } from 'node:path';

// The README's shell examples are meant to be pasted in order, from the quick start on. A
// variable read before any example sets it is empty in the reader's shell: `$KEY` was first set
// in "Endpoints", near the end, and every task and desirability example before it sent an empty
// key (401 Missing API key). An elided value (`hotkey=5F…`) pasted as it stands sends a byte no
// HTTP parser takes (400 Malformed HTTP request), which says nothing of the example.

const README = readFileSync(join(__dirname, '..', 'README.md'), 'utf8');
/** Set by the reader's shell, not by the README. */
const ENVIRONMENT = new Set(['HOME', 'PWD', 'PATH', 'USER']);

interface Line {
  line: number;
  code: string;
}

/** The lines of the README's bash blocks, in reading order, comments cut off. */
function commandLines(): Line[] {
  return [...README.matchAll(/^```(?:bash|sh|shell)\n([\s\S]*?)^```/gm)].flatMap((block) => {
    const first = README.slice(0, block.index).split('\n').length + 1;
    return block[1].split('\n').map((text, index) => ({
      line: first + index,
      code: text.replace(/(^|\s)#.*$/, ''),
    }));
  });
}

/** The variables `lines` read before one of them sets it, each with its README line. */
function unsetReads(lines: Line[]): string[] {
  const set = new Set(ENVIRONMENT);
  const unset: string[] = [];
  for (const { line, code } of lines) {
    for (const [, name] of code.matchAll(/\$\{?([A-Za-z_]\w*)/g))
      if (!set.has(name)) unset.push(`README.md:${line}: $${name}`);
    for (const [, name] of code.matchAll(/(?:^|[\s;&(])(?:export\s+)?([A-Za-z_]\w*)=/g))
      set.add(name);
  }
  return unset;
}

describe("The README's shell examples", () => {
  const lines = commandLines();

  it('are found', () => {
    expect(lines.length).toBeGreaterThan(50);
  });

  it('read no variable before an earlier example sets it', () => {
    expect(unsetReads(lines)).toEqual([]);
  });

  // A deployment's reader starts at "Running with docker-compose", with a .env and without
  // .data/master-key (npm start's): "Scaling out" read the master key as $MASTER, set only by
  // "Authentication and keys" (from .data/master-key), and sent an empty key.
  it('read no variable the deployment sections do not set, from "Running with docker-compose" on', () => {
    const start = README.split('\n').indexOf('## Running with docker-compose') + 1;
    expect(start).toBeGreaterThan(0);
    expect(unsetReads(lines.filter(({ line }) => line > start))).toEqual([]);
  });

  it('hold the master key in $MASTER_KEY, the name .env.example and docker-compose.yml give it', () => {
    const root = join(__dirname, '..');
    for (const file of ['.env.example', 'docker-compose.yml'])
      expect(readFileSync(join(root, file), 'utf8')).toMatch(/^\s*#? ?MASTER_KEY[=:]/m);
    const source =
      /([A-Za-z_]\w*)=\$\((?:cat \.data\/master-key|sed -n 's\/\^MASTER_KEY=\/\/p' \.env)\)/g;
    const holders = lines.flatMap(({ line, code }) =>
      [...code.matchAll(source)].map(([, name]) => `README.md:${line}: ${name}`),
    );
    expect(holders.length).toBeGreaterThanOrEqual(2);
    expect(holders.filter((holder) => !holder.endsWith(': MASTER_KEY'))).toEqual([]);
  });

  it('elide nothing outside their comments', () => {
    const elided = lines
      .filter(({ code }) => code.includes('…'))
      .map(({ line, code }) => `README.md:${line}: ${code.trim()}`);
    expect(elided).toEqual([]);
  });
});
