import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { load } from 'js-yaml';

const ROOT = join(__dirname, '..');

interface ComposeService {
  build?: unknown;
  init?: boolean;
  environment?: Record<string, string>;
  volumes?: string[];
}

const compose = load(readFileSync(join(ROOT, 'docker-compose.yml'), 'utf8')) as {
  services: Record<string, ComposeService>;
  volumes: Record<string, unknown>;
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

  // Its database is on the postgres-data volume: task datasets lost with the container left
  // completed tasks whose downloads answer 503.
  it('keeps the DATA_DIR of every gateway on a named volume of its own', () => {
    const gateways = Object.entries(compose.services).filter(
      ([, service]) => service.environment?.DATA_DIR,
    );
    expect(gateways.map(([name]) => name).sort()).toEqual(['api', 'api-devnet']);
    const volumes = gateways.map(([name, service]) => {
      const mount = (service.volumes ?? []).find((volume) =>
        volume.endsWith(`:${service.environment!.DATA_DIR}`),
      );
      const volume = mount?.split(':')[0];
      return { name, volume, declared: volume !== undefined && volume in compose.volumes };
    });
    expect(volumes).toEqual([
      { name: 'api', volume: 'api-data', declared: true },
      { name: 'api-devnet', volume: 'api-devnet-data', declared: true },
    ]);
  });

  it('runs the gateway image under tini, reaping orphans also when not PID 1', () => {
    const dockerfile = readFileSync(join(ROOT, 'Dockerfile'), 'utf8');
    const runtime = dockerfile.slice(dockerfile.lastIndexOf('\nFROM '));
    expect(runtime).toMatch(/^FROM \S+ AS runtime$/m);
    expect(runtime).toMatch(/install [^\n]*\btini\b/);
    expect(runtime).toMatch(/^ENTRYPOINT \["\/usr\/bin\/tini", "-s", "--"\]$/m);
  });
});
