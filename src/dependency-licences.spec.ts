import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

const ROOT = resolve(__dirname, '..');

/**
 * The licences the image may ship: permissive ones, which an MIT project passes on with their
 * notices (each package's licence file stays in its folder in the image). A copyleft one (GPL,
 * AGPL, LGPL, MPL) would put terms on whoever distributes the image: its arrival is a decision
 * (docs/decisions.md, "What the image holds"), not something a lock file update slips in.
 */
const PERMITTED = new Set([
  'MIT',
  'ISC',
  'Apache-2.0',
  'BSD-2-Clause',
  'BSD-3-Clause',
  '0BSD',
  'BlueOak-1.0.0',
  'Python-2.0',
  // argparse 3's (js-yaml's dependency; a dependency drift audit's `npm update` brought it):
  // the Python Software Foundation licence, permissive as its Python-2.0 is.
  'PSF-2.0',
  '(MIT AND BSD-3-Clause)',
]);

interface LockEntry {
  license?: unknown;
  dev?: boolean;
  devOptional?: boolean;
  optional?: boolean;
}

/** Every package of the lock, by its path (`node_modules/…`; '' is the project). */
const LOCKED = (
  JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as {
    packages: Record<string, LockEntry>;
  }
).packages;

/** The production tree as the Dockerfile prunes it (`--omit=dev --omit=optional`). */
function shipped(): [string, LockEntry][] {
  return Object.entries(LOCKED).filter(
    ([path, entry]) => path !== '' && !entry.dev && !entry.devOptional && !entry.optional,
  );
}

/** A package's declared licence, from its own package.json when the lock has none (`licenses`). */
function licenceOf(path: string, entry: LockEntry): string {
  if (typeof entry.license === 'string') return entry.license;
  const manifest = JSON.parse(readFileSync(join(ROOT, path, 'package.json'), 'utf8')) as {
    licenses?: { type?: string }[];
  };
  return (manifest.licenses ?? []).map((licence) => licence.type).join(' OR ') || 'none';
}

describe('the licences of the dependencies the image ships', () => {
  it('are all permissive, as listed here', () => {
    const packages = shipped();
    expect(packages.length).toBeGreaterThan(100);
    const others = packages
      .map(([path, entry]) => `${path}: ${licenceOf(path, entry)}`)
      .filter((line) => !PERMITTED.has(line.slice(line.lastIndexOf(': ') + 2)));
    expect(others).toEqual([]);
  });

  it('leave the GPL packages @polkadot pulls out, as optional ones', () => {
    const smoldot = LOCKED['node_modules/smoldot'];
    expect(smoldot?.license).toMatch(/GPL/);
    expect(shipped().map(([path]) => path)).not.toContain('node_modules/smoldot');
  });
});
