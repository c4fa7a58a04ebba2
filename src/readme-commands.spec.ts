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

describe("The README's shell examples", () => {
  const lines = commandLines();

  it('are found', () => {
    expect(lines.length).toBeGreaterThan(50);
  });

  it('read no variable before an earlier example sets it', () => {
    const set = new Set(ENVIRONMENT);
    const unset: string[] = [];
    for (const { line, code } of lines) {
      for (const [, name] of code.matchAll(/\$\{?([A-Za-z_]\w*)/g))
        if (!set.has(name)) unset.push(`README.md:${line}: $${name}`);
      for (const [, name] of code.matchAll(/(?:^|[\s;&(])(?:export\s+)?([A-Za-z_]\w*)=/g))
        set.add(name);
    }
    expect(unset).toEqual([]);
  });

  it('elide nothing outside their comments', () => {
    const elided = lines
      .filter(({ code }) => code.includes('…'))
      .map(({ line, code }) => `README.md:${line}: ${code.trim()}`);
    expect(elided).toEqual([]);
  });
});
