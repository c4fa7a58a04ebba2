import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

// Code, tests and documents point readers at a section of the project's documents by its title:
// `docs/decisions.md, "Health"`, `README ("Scraping tasks")`. A title renamed or a reference
// mistyped leaves the reader searching 3,000 lines; these tests name the reference that leads
// nowhere, and the mention of docs/decisions.md in code that names no section at all.

const ROOT = join(__dirname, '..');
const DOCUMENTS = {
  decisions: 'docs/decisions.md',
  README: 'README.md',
  'miner-protocol': 'docs/miner-protocol.md',
} as const;
type DocumentName = keyof typeof DOCUMENTS;
const SOURCE_FOLDERS = ['src', 'test', 'bench'];
const OTHER_FILES = [
  'README.md',
  'docs/decisions.md',
  'docs/miner-protocol.md',
  '.env.example',
  'docker-compose.yml',
  '.dependency-cruiser.js',
  'Dockerfile',
  '.dockerignore',
  '.npmrc',
];
/** Names the documents to read them, not to refer to a section. */
const THIS_FILE = 'src/doc-references.spec.ts';
const SKIPPED_FOLDERS = new Set(['node_modules', 'generated-client']);

function sourceFiles(folder: string): string[] {
  return readdirSync(join(ROOT, folder), { withFileTypes: true }).flatMap((entry) => {
    const path = `${folder}/${entry.name}`;
    if (entry.isDirectory()) return SKIPPED_FOLDERS.has(entry.name) ? [] : sourceFiles(path);
    return /\.(ts|js)$/.test(entry.name) ? [path] : [];
  });
}

/**
 * The text as one line, so that a reference broken across lines reads whole: comment markers
 * at line starts and the joins of concatenated string literals are dropped.
 */
function asOneLine(text: string): string {
  return text
    .replace(/['"`]\s*\+\s*\n\s*['"`]/g, '')
    .replace(/\s*\n\s*(?:\/\/|\*(?!\*)|#(?!#))?\s*/g, ' ');
}

/** What a reference may name: a heading, or the bold words a paragraph or list item opens with. */
function titlesOf(path: string): string[] {
  const text = readFileSync(join(ROOT, path), 'utf8');
  const headings = [...text.matchAll(/^#+ +(.+?)\s*$/gm)].map((match) => match[1]);
  const leads = [...text.matchAll(/^\s*(?:- )?\*\*(.+?)\*\*/gm)].map((match) => match[1]);
  return [...headings, ...leads];
}

/** A title, or its first words (`"The formula"` for "The formula: read as the validators read"). */
function names(title: string, reference: string): boolean {
  return title === reference || new RegExp(`^${escape(reference)}[\\s:.,(]`).test(title);
}

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

const REFERENCE =
  /\b(decisions|README|miner-protocol)(?:\.md)?`?,? \(?(?:see |under )?"([^"]{2,150})"/g;

/**
 * Within a document: `see "Secrets"`, `(above, "Scraping task lifecycle")`; not one that names
 * another document first (`decisions.md, see "…"`: REFERENCE's).
 */
const WITHIN =
  /(?<!(?:decisions|README|miner-protocol)(?:\.md)?`?,? \(?)\b(?:above|below|see|under)[,:]? \(?"([^"]{2,150})"/gi;

interface Reference {
  file: string;
  document: DocumentName;
  title: string;
}

function references(): Reference[] {
  const files = [...SOURCE_FOLDERS.flatMap(sourceFiles), ...OTHER_FILES];
  return files.flatMap((file) =>
    [...asOneLine(readFileSync(join(ROOT, file), 'utf8')).matchAll(REFERENCE)].map((match) => ({
      file,
      document: match[1] as DocumentName,
      title: match[2],
    })),
  );
}

describe("References to the documents' sections", () => {
  const found = references();
  const titles = Object.fromEntries(
    Object.entries(DOCUMENTS).map(([name, path]) => [name, titlesOf(path)]),
  ) as Record<DocumentName, string[]>;

  it('finds them in code, tests and documents', () => {
    expect(found.length).toBeGreaterThan(30);
    const documents = new Set(found.map((reference) => reference.document));
    expect([...documents].sort()).toEqual(Object.keys(DOCUMENTS).sort());
  });

  it('each names a section of its document', () => {
    const nowhere = found
      .filter(({ document, title }) => !titles[document].some((each) => names(each, title)))
      .map(({ file, document, title }) => `${file}: ${DOCUMENTS[document]}, "${title}"`);
    expect(nowhere).toEqual([]);
  });

  it('each of a document\'s references to its own sections (see "…", above, below) names one', () => {
    const nowhere = Object.entries(DOCUMENTS).flatMap(([name, path]) => {
      const text = asOneLine(readFileSync(join(ROOT, path), 'utf8'));
      return [...text.matchAll(WITHIN)]
        .map((match) => match[1])
        .filter((title) => !titles[name as DocumentName].some((each) => names(each, title)))
        .map((title) => `${path}: "${title}"`);
    });
    expect(nowhere).toEqual([]);
  });

  it('a mention of docs/decisions.md in code names its section', () => {
    const code = SOURCE_FOLDERS.flatMap(sourceFiles).filter((file) => file !== THIS_FILE);
    const untitled = code.flatMap((file) => {
      const text = asOneLine(readFileSync(join(ROOT, file), 'utf8'));
      return [...text.matchAll(/decisions\.md`?(?!`?,? \(?(?:see |under )?")/g)].map(
        (match) => `${file}: …${text.slice(match.index - 40, match.index + 30)}…`,
      );
    });
    expect(untitled).toEqual([]);
  });
});

// docs/decisions.md opens with its sections' list (a newcomer's audit found 54 sections and no
// way in but search): a section added, renamed or moved is listed there as it is, in order.
it("lists docs/decisions.md's sections in its contents, in order, each linked to its title", () => {
  const text = readFileSync(join(ROOT, DOCUMENTS.decisions), 'utf8');
  const sections = [...text.matchAll(/^## (.+)$/gm)]
    .map((match) => match[1])
    .filter((title) => title !== 'Contents');
  const listed = [...text.matchAll(/^- \[(.+)\]\(#(.+)\)$/gm)].map(([, title, anchor]) => ({
    title,
    anchor,
  }));
  expect(listed).toEqual(
    sections.map((title) => ({
      title,
      anchor: title
        .toLowerCase()
        .replace(/[^\w\- ]/g, '')
        .replace(/ /g, '-'),
    })),
  );
});
