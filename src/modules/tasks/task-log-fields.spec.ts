import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Every line about a task carries its id as `task_id`, so that one task's lines are found by a
 * filter (a log audit's finding: most had it in the message only). Read off the sources: a new
 * line that names a task in its message and not in its fields fails here.
 */
describe("The task module's log lines", () => {
  const calls = readdirSync(__dirname)
    .filter((file) => file.endsWith('.ts') && !file.endsWith('.spec.ts'))
    .flatMap((file) => {
      const text = readFileSync(join(__dirname, file), 'utf8');
      // A logger call up to the end of its message's first line.
      return [...text.matchAll(/this\.logger\.(?:log|warn|error|debug)\(([^`]*`[^`\n]*)/g)].map(
        (match) => ({ file, call: match[1] }),
      );
    });

  it('are found', () => {
    expect(calls.length).toBeGreaterThan(15);
  });

  it('name the task they are about in a task_id field', () => {
    const about = calls.filter(({ call }) => /`task \$\{/.test(call));
    expect(about.length).toBeGreaterThan(15);
    expect(about.filter(({ call }) => !call.includes('task_id'))).toEqual([]);
  });
});
