import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { load } from 'js-yaml';

const ROOT = join(__dirname, '..');

interface ComposeService {
  build?: unknown;
  init?: boolean;
}

const compose = load(readFileSync(join(ROOT, 'docker-compose.yml'), 'utf8')) as {
  services: Record<string, ComposeService>;
};

/** The services built from the Dockerfile: node runs in each. */
const ourServices = Object.entries(compose.services).filter(([, service]) => service.build);

describe('docker-compose.yml and the Dockerfile', () => {
  it('finds the services built here', () => {
    expect(ourServices.map(([name]) => name).sort()).toEqual(['api', 'api-devnet', 'devnet']);
  });

  // As PID 1, node reaps no orphan: the ssh of a git command that timed out stayed a zombie.
  it('runs node under an init in every service built here', () => {
    expect(
      ourServices.filter(([, service]) => service.init !== true).map(([name]) => name),
    ).toEqual([]);
  });

  it('runs the gateway image under tini, reaping orphans also when not PID 1', () => {
    const dockerfile = readFileSync(join(ROOT, 'Dockerfile'), 'utf8');
    const runtime = dockerfile.slice(dockerfile.lastIndexOf('\nFROM '));
    expect(runtime).toMatch(/^FROM \S+ AS runtime$/m);
    expect(runtime).toMatch(/install [^\n]*\btini\b/);
    expect(runtime).toMatch(/^ENTRYPOINT \["\/usr\/bin\/tini", "-s", "--"\]$/m);
  });
});
