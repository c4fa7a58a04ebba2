import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { load } from 'js-yaml';

const ROOT = join(__dirname, '..');

interface ComposeService {
  build?: unknown;
  healthcheck?: { test: string[] };
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

  // A fresh volume's first start runs a temporary server on the socket alone while it
  // initialises: a socket check took it for the real one and released the services waiting
  // (a cold-start audit; docker-library/postgres#880).
  it('checks Postgres over TCP, where the real server alone listens', () => {
    expect(compose.services.postgres.healthcheck?.test.join(' ')).toMatch(
      /pg_isready -h 127\.0\.0\.1 /,
    );
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

/** The Dockerfile's stages by name (`FROM … AS <name>`), each its text up to the next FROM. */
function dockerfileStages(): Map<string, string> {
  const dockerfile = readFileSync(join(ROOT, 'Dockerfile'), 'utf8');
  const stages = new Map<string, string>();
  for (const stage of dockerfile.split(/^(?=FROM )/m).slice(1))
    stages.set(/^FROM \S+ AS (\S+)/.exec(stage)?.[1] ?? '', stage);
  return stages;
}

// docs/decisions.md, "Install scripts": the build runs no dependency's install script (tsc needs
// none), and the images ship neither development nor optional packages (the chain client's
// light client, GPL-3.0, never loaded).
describe("the Dockerfile's dependencies", () => {
  const stages = dockerfileStages();
  const lines = (pattern: RegExp) =>
    [...stages.values()].flatMap((stage) => stage.match(pattern) ?? []);

  it('are installed without running install scripts', () => {
    const installs = lines(/\bnpm (?:ci|install)\b[^\n]*/g);
    expect(installs.length).toBeGreaterThan(0);
    expect(installs.filter((line) => !/ --ignore-scripts\b/.test(line))).toEqual([]);
  });

  it('are pruned to the production ones, optional packages left out, for every image', () => {
    const prunes = lines(/\bnpm prune\b[^\n]*/g);
    expect(prunes).toHaveLength(2);
    expect(
      prunes.filter((line) => !/ --omit=dev\b/.test(line) || !/ --omit=optional\b/.test(line)),
    ).toEqual([]);
  });

  // The `node` user runs the app: code it could rewrite would outlive a compromise of it.
  it('are copied owned by root into the images that run; node owns only where the app writes', () => {
    for (const name of ['runtime', 'devnet']) {
      const stage = stages.get(name) ?? '';
      expect(stage).toMatch(/^USER node$/m);
      expect(stage.match(/^COPY .*$/gm)?.filter((line) => line.includes('--chown'))).toEqual([]);
    }
    // Group 0 too: OpenShift runs an image as an arbitrary uid in group 0, and the start failed
    // on DATA_DIR (a restricted-runtime audit).
    expect(lines(/\bchmod 775 \S+/g).sort()).toEqual(['chmod 775 /app/.data', 'chmod 775 /devnet']);
    expect(lines(/\bchown node:\S+ \S+/g).sort()).toEqual([
      'chown node:0 /app/.data',
      'chown node:0 /devnet',
    ]);
  });
});

describe('.dockerignore', () => {
  const patterns = readFileSync(join(ROOT, '.dockerignore'), 'utf8')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'));

  it('keeps local settings, wallet files and deploy keys out of the build context', () => {
    expect(patterns).toEqual(
      expect.arrayContaining([
        '.env',
        '.env.*',
        '!.env.example',
        '**/wallets',
        '**/hotkeys',
        '**/coldkey',
        'gravity-ssh',
      ]),
    );
  });

  // `**/<name>` drops every path holding that name: a source directory so named would vanish
  // from the build.
  it('drops no directory or file the image is built from', () => {
    const anywhere = new Set(
      patterns.filter((line) => line.startsWith('**/')).map((line) => line.slice(3)),
    );
    const dropped = ['src', 'bench', 'config']
      .flatMap((dir) =>
        readdirSync(join(ROOT, dir), { recursive: true }).map((path) => `${dir}/${String(path)}`),
      )
      .filter((path) => path.split('/').some((part) => anywhere.has(part)));
    expect(anywhere.size).toBeGreaterThan(0);
    expect(dropped).toEqual([]);
  });
});
