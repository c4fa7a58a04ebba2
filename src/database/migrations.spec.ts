import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { MIGRATIONS } from './data-source-options';

/** `1764770000000-TaskCollectionFailures.ts` → `TaskCollectionFailures1764770000000`. */
function classNameOf(file: string): string {
  const [timestamp, name] = file.replace(/\.ts$/, '').split('-');
  return `${name}${timestamp}`;
}

describe('MIGRATIONS', () => {
  // TypeORM runs only the migrations it is given: a file left out of the list never runs.
  it('lists every file of migrations/, oldest first', () => {
    const files = readdirSync(join(__dirname, 'migrations'))
      .filter((file) => file.endsWith('.ts') && !file.endsWith('.spec.ts'))
      .sort();
    expect(MIGRATIONS.map((migration) => migration.name)).toEqual(files.map(classNameOf));
  });
});
