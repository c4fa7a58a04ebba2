import { configWarnings } from './config-warnings';
import { loadConfig } from './load-config';
import { problemsOf } from '../../test/support/config-problems';
import { longestPublicationAttemptMs } from './publication-timeouts';

const PUBLISHING = {
  GRAVITY_REPO_URL: 'https://github.com/macrocosm-os/gravity',
  SUBTENSOR_URL: 'wss://entrypoint-finney.opentensor.ai:443',
};
const PRODUCTION = {
  ...PUBLISHING,
  NODE_ENV: 'production',
  MASTER_KEY: 'a-long-enough-master-key',
  DATABASE_URL: 'postgres://gateway@127.0.0.1:5432/gateway',
};
const TOO_SHORT =
  /^PUBLICATION_LEASE_MS: 60000 is shorter than one publication attempt may take, 420000 ms \(a git fetch of 120 s, a push of 120 s, two chain reads of SUBTENSOR_TIMEOUT_MS=30000 and the commitment's inclusion, 120 s or SUBTENSOR_TIMEOUT_MS\): .*; set it at least 420000$/;

describe('PUBLICATION_LEASE_MS against one publication attempt', () => {
  // A slow but live replica lost its claim mid-push; a second one claimed the same vote, and
  // both pushed and submitted set_commitment.
  it('refuses in production a lease shorter than a fetch, a push, a chain read and an inclusion', () => {
    expect(problemsOf({ ...PRODUCTION, PUBLICATION_LEASE_MS: '60000' })).toEqual([
      expect.stringMatching(TOO_SHORT),
    ]);
    expect(problemsOf({ ...PRODUCTION, PUBLICATION_LEASE_MS: '419999' })).toHaveLength(1);
    expect(loadConfig({ ...PRODUCTION, PUBLICATION_LEASE_MS: '420000' }).publication.leaseMs).toBe(
      420_000,
    );
  });

  it('starts with the default lease, and counts SUBTENSOR_TIMEOUT_MS where it is the longer bound', () => {
    expect(loadConfig(PRODUCTION).publication.leaseMs).toBe(600_000);
    expect(longestPublicationAttemptMs(30_000)).toBe(420_000);
    // Two reads and an inclusion (which may have to connect first) of 200 s each.
    expect(longestPublicationAttemptMs(200_000)).toBe(840_000);
    expect(problemsOf({ ...PRODUCTION, SUBTENSOR_TIMEOUT_MS: '200000' })).toEqual([
      expect.stringMatching(/^PUBLICATION_LEASE_MS: 600000 is shorter .*; set it at least 840000$/),
    ]);
  });

  it('does not hold a lease to it where nothing is published', () => {
    const { GRAVITY_REPO_URL: _repo, ...withoutGravity } = PRODUCTION;
    expect(problemsOf({ ...withoutGravity, PUBLICATION_LEASE_MS: '60000' })).toEqual([]);
  });

  // The publication e2e tests shorten the lease to see a dead replica's claim taken over.
  it('warns outside production', () => {
    const config = loadConfig({ ...PUBLISHING, NODE_ENV: 'test', PUBLICATION_LEASE_MS: '1000' });
    expect(configWarnings(config)).toEqual([
      expect.stringMatching(/^PUBLICATION_LEASE_MS: 1000 is shorter than one publication attempt/),
    ]);
    expect(configWarnings(loadConfig(PUBLISHING))).toEqual([]);
    expect(configWarnings(loadConfig({ PUBLICATION_LEASE_MS: '1000' }))).toEqual([]);
  });
});
