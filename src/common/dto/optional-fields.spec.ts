import 'reflect-metadata';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { DECORATORS } from '@nestjs/swagger';
import ts from 'typescript';

// A DTO says twice whether a field may be missing: in its type (`name?:`, or an initializer for
// a request's default) and in its Swagger metadata (@ApiPropertyOptional, `required: false`, or
// a helper decorator that applies either). They disagreed on seven always-sent task fields,
// documented as optional: every client generator typed them `x?: string | null` (a contract
// audit). The type is read from each *.dto.ts (the TypeScript parser), the document's side from
// the metadata the decorators left on the class, so helpers and shared option objects count.

const SRC = join(__dirname, '..', '..');

function dtoFiles(folder: string): string[] {
  return readdirSync(folder, { withFileTypes: true }).flatMap((entry) => {
    const path = join(folder, entry.name);
    if (entry.isDirectory()) return dtoFiles(path);
    return entry.name.endsWith('.dto.ts') ? [path] : [];
  });
}

interface DeclaredField {
  className: string;
  name: string;
  typedOptional: boolean;
}

function declaredFields(path: string): DeclaredField[] {
  const source = ts.createSourceFile(
    path,
    readFileSync(path, 'utf8'),
    ts.ScriptTarget.Latest,
    true,
  );
  const found: DeclaredField[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isPropertyDeclaration(node) && ts.isClassDeclaration(node.parent) && node.parent.name)
      found.push({
        className: node.parent.name.text,
        name: node.name.getText(source),
        typedOptional: node.questionToken !== undefined || node.initializer !== undefined,
      });
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** `File.ts Class.field: …` for each documented field whose two sayings disagree. */
function disagreements(path: string): { checked: number; found: string[] } {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const exported = require(path) as Record<string, unknown>;
  let checked = 0;
  const found: string[] = [];
  for (const { className, name, typedOptional } of declaredFields(path)) {
    const dto = exported[className];
    if (typeof dto !== 'function') continue;
    const documented = Reflect.getMetadata(DECORATORS.API_MODEL_PROPERTIES, dto.prototype, name) as
      { required?: boolean } | undefined;
    if (!documented) continue;
    checked += 1;
    const documentedOptional = documented.required === false;
    if (documentedOptional !== typedOptional)
      found.push(
        `${relative(SRC, path)} ${className}.${name}: documented ` +
          `${documentedOptional ? 'optional' : 'required'}, typed ${typedOptional ? 'optional' : 'required'}`,
      );
  }
  return { checked, found };
}

describe('DTO fields', () => {
  it('are optional in the document exactly when their type lets them be missing', () => {
    const results = dtoFiles(SRC).map(disagreements);
    expect(results.reduce((sum, { checked }) => sum + checked, 0)).toBeGreaterThan(300);
    expect(results.flatMap(({ found }) => found)).toEqual([]);
  });
});
