import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';

// A DTO says twice whether a field may be missing: in its type (`name?:`, or an initializer for
// a request's default) and in its Swagger decorator (@ApiPropertyOptional, or `required: false`).
// They disagreed on seven always-sent task fields, documented as optional: every client
// generator typed them `x?: string | null` (a contract audit). This reads every *.dto.ts.

const SRC = join(__dirname, '..', '..');

function dtoFiles(folder: string): string[] {
  return readdirSync(folder, { withFileTypes: true }).flatMap((entry) => {
    const path = join(folder, entry.name);
    if (entry.isDirectory()) return dtoFiles(path);
    return entry.name.endsWith('.dto.ts') ? [path] : [];
  });
}

/** `File.ts Class.field` for each field whose two sayings disagree. */
function disagreements(path: string): string[] {
  const source = ts.createSourceFile(
    path,
    readFileSync(path, 'utf8'),
    ts.ScriptTarget.Latest,
    true,
  );
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isPropertyDeclaration(node) && ts.isClassDeclaration(node.parent)) {
      const decorator = ts
        .getDecorators(node)
        ?.map((each) => each.expression)
        .find(
          (call): call is ts.CallExpression =>
            ts.isCallExpression(call) &&
            ['ApiProperty', 'ApiPropertyOptional'].includes(call.expression.getText(source)),
        );
      if (decorator) {
        const documentedOptional =
          decorator.expression.getText(source) === 'ApiPropertyOptional' ||
          /\brequired:\s*false\b/.test(decorator.arguments[0]?.getText(source) ?? '');
        const typedOptional = node.questionToken !== undefined || node.initializer !== undefined;
        if (documentedOptional !== typedOptional)
          found.push(
            `${relative(SRC, path)} ${node.parent.name?.text}.${node.name.getText(source)}: ` +
              `documented ${documentedOptional ? 'optional' : 'required'}, typed ` +
              `${typedOptional ? 'optional' : 'required'}`,
          );
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

describe('DTO fields', () => {
  it('are optional in the document exactly when their type lets them be missing', () => {
    const files = dtoFiles(SRC);
    expect(files.length).toBeGreaterThan(25);
    expect(files.flatMap(disagreements)).toEqual([]);
  });
});
