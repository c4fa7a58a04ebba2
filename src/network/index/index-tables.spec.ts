import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import * as ts from 'typescript';

/**
 * The miner-index module (this folder) owns the index and its totals: no SQL elsewhere in
 * `src` names their tables. Migrations define them, so they are left out.
 */
const SRC = join(__dirname, '..', '..');
const OWNER = relative(SRC, __dirname);
const EXEMPT = [OWNER, join('database', 'migrations')];
const INDEX_TABLES = [
  'miner_index',
  'labels',
  'label_totals',
  'bucket_totals',
  'miner_label_arrays',
  'miner_label_totals',
  'miner_bucket_totals',
  'aggregates_version',
];
const TABLE = new RegExp(`\\b(${INDEX_TABLES.join('|')})\\b`);
const SQL = /\b(select|insert|update|delete|truncate|copy|create|drop|alter)\b/i;

function typescriptFiles(folder: string): string[] {
  return readdirSync(folder, { withFileTypes: true }).flatMap((entry) => {
    const path = join(folder, entry.name);
    if (entry.isDirectory()) return typescriptFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

/** Every string and template text of `source` that reads as SQL on an index table. */
function indexSqlIn(fileName: string, source: string): string[] {
  const file = ts.createSourceFile(fileName, source, ts.ScriptTarget.Latest, false);
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    let text: string | undefined;
    if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) text = node.text;
    else if (ts.isTemplateExpression(node))
      text = [node.head.text, ...node.templateSpans.map((span) => span.literal.text)].join(' ');
    if (text !== undefined && SQL.test(text) && TABLE.test(text)) {
      const line = file.getLineAndCharacterOfPosition(node.getStart(file)).line + 1;
      found.push(`${fileName}:${line}: ${TABLE.exec(text)![1]}`);
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  return found;
}

describe('SQL on the miner index', () => {
  it('is found only in the miner-index module', () => {
    const offenders = typescriptFiles(SRC)
      .map((path) => relative(SRC, path))
      .filter((path) => !EXEMPT.some((folder) => path.startsWith(folder + '/')))
      .flatMap((path) => indexSqlIn(path, readFileSync(join(SRC, path), 'utf8')));
    expect(offenders).toEqual([]);
  });

  it('finds an index table in SQL strings and templates, not in prose', () => {
    const source = [
      "const a = 'SELECT id FROM labels WHERE value = $1';",
      'const b = `UPDATE label_totals SET bytes = ${1}`;',
      "const c = 'the labels of a source';",
      '// SELECT * FROM miner_index',
    ].join('\n');
    expect(indexSqlIn('x.ts', source)).toEqual(['x.ts:1: labels', 'x.ts:2: label_totals']);
  });
});
