import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import semver from 'semver';

// package.json's `engines.node` is the promise of which Node runs the project: `npm install`,
// `npm start`, `npm test` and the image. It drifted once (">=20.12" while undici asked for
// 20.18.1 and jest refuses Node 21), and npm only warns, so these tests hold it to every
// package the lock file installs.

const ROOT = join(__dirname, '..');

interface LockedPackage {
  engines?: { node?: string };
}

function readJson<T>(path: string): T {
  return JSON.parse(readFileSync(join(ROOT, path), 'utf8')) as T;
}

const ours = readJson<{ engines: { node: string } }>('package.json').engines.node;
const locked = readJson<{ packages: Record<string, LockedPackage> }>('package-lock.json').packages;

describe("package.json's engines.node", () => {
  it('is a valid range', () => {
    expect(semver.validRange(ours)).not.toBeNull();
  });

  it('admits no Node version that an installed package refuses', () => {
    const refusing = Object.entries(locked)
      .filter(([path]) => path !== '')
      .flatMap(([path, entry]) => {
        const theirs = entry.engines?.node;
        if (theirs === undefined || semver.validRange(theirs) === null) return [];
        return semver.subset(ours, theirs) ? [] : [`${path}: ${theirs}`];
      });
    expect(refusing).toEqual([]);
  });

  it('admits the Node version of the Dockerfile', () => {
    const images = [
      ...readFileSync(join(ROOT, 'Dockerfile'), 'utf8').matchAll(/^FROM node:(\d+)/gm),
    ];
    expect(images.length).toBeGreaterThan(0);
    for (const [, major] of images) expect(semver.intersects(ours, `${major}.x`)).toBe(true);
  });

  it('is what the lock file records for the project', () => {
    expect(locked['']?.engines?.node).toBe(ours);
  });
});
