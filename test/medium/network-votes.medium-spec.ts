import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NetworkVotesRepository } from '../../src/modules/desirability/network-votes.repository';
import {
  MISSING_COMMIT_REFETCH_MS,
  NetworkVotesService,
} from '../../src/modules/desirability/network-votes.service';
import { ChainCommitmentsService } from '../../src/network/chain/chain-commitments.service';
import { ChainCommitment } from '../../src/network/chain/commitments';
import { GravityClone } from '../../src/network/gravity/gravity-clone';
import { GravityGit } from '../../src/network/gravity/gravity-git';
import { createGravityRemote, GravityRemote } from '../support/gravity-remote';
import { MediumDatabase, openMediumDatabase } from '../support/medium-database';
import { testConfig } from '../support/test-config';

const MISSING_HOTKEY = '5F4tQyWrhfGVcNhoqeiNsR6KjD4wMZ2kfhLj4oHYuyHbZAc3';
const VOTER = '5GrwvaEF5zXb26Fz9rcQpDWS57CtERHpNehXCPcNoHGKutQY';
const VOTE = '[{"id": "tao", "weight": 1, "params": {"platform": "x", "label": "#tao"}}]';

/**
 * `?hotkey=` lookups of a validator's vote: the commitment from a chain stand-in, the file from a
 * Gravity stand-in (file://), cached in Postgres. Fetches of the repository are counted.
 */
describe(`${NetworkVotesService.name} lookups`, () => {
  let medium: MediumDatabase;
  let remote: GravityRemote;
  let dataDir: string;
  let service: NetworkVotesService;
  const commitments = new Map<string, ChainCommitment>();
  const commit = (hotkey: string, sha: string) =>
    commitments.set(hotkey, { hotkey, block: 100, sha });
  let fetches: { branch: jest.SpyInstance; branches: jest.SpyInstance };
  const fetched = () => ({
    branch: fetches.branch.mock.calls.length,
    branches: fetches.branches.mock.calls.length,
  });
  const start = Date.now();
  /** Stops the clock the lookups and the clone's fetches read at `ms` after `start`. */
  const clockAt = (ms: number) => jest.spyOn(Date, 'now').mockReturnValue(start + ms);

  beforeAll(async () => {
    medium = await openMediumDatabase();
  });
  afterAll(() => medium.close());

  beforeEach(() => {
    remote = createGravityRemote('main');
    dataDir = mkdtempSync(join(tmpdir(), 'network-votes-'));
    commitments.clear();
    const chain = {
      available: true,
      of: (hotkey: string) => Promise.resolve(commitments.get(hotkey)),
    } as unknown as ChainCommitmentsService;
    const gravity = new GravityGit({
      repoUrl: remote.url,
      branch: 'main',
      token: undefined,
      dataDir,
    });
    service = new NetworkVotesService(
      chain,
      new NetworkVotesRepository(medium.dataSource),
      gravity,
      testConfig({ netuid: 13 }),
    );
    fetches = {
      branch: jest.spyOn(GravityClone.prototype, 'fetch'),
      branches: jest.spyOn(GravityClone.prototype, 'fetchAllBranches'),
    };
  });
  afterEach(() => {
    jest.restoreAllMocks();
    remote.remove();
    rmSync(dataDir, { recursive: true, force: true });
  });

  // Any key holder could make the gateway fetch GitHub twice per request, back to back, with a
  // hotkey whose commitment names a SHA on no branch (an audit's finding).
  it('fetches for a commit on no branch once a minute, however often it is looked up', async () => {
    const missing = randomBytes(20).toString('hex');
    commit(MISSING_HOTKEY, missing);

    // A lookup every ten seconds: each one after the first finds the last fetch a while old.
    for (let lookup = 0; lookup < 5; lookup++) {
      clockAt(lookup * 10_000);
      await expect(service.submissionOf(MISSING_HOTKEY)).rejects.toThrow(
        `commit ${missing} is not in the Gravity repository`,
      );
    }
    expect(fetched()).toEqual({ branch: 1, branches: 1 });

    clockAt(MISSING_COMMIT_REFETCH_MS - 1);
    await expect(service.submissionOf(MISSING_HOTKEY)).rejects.toThrow('is not in the Gravity');
    expect(fetched()).toEqual({ branch: 1, branches: 1 });

    clockAt(MISSING_COMMIT_REFETCH_MS);
    await expect(service.submissionOf(MISSING_HOTKEY)).rejects.toThrow('is not in the Gravity');
    expect(fetched()).toEqual({ branch: 2, branches: 2 });
  });

  // A validator commits its SHA on chain seconds after pushing it: a commit not seen yet is
  // fetched for at its first lookup, whatever other commit was just found missing.
  it('still fetches for a new commit at its first lookup', async () => {
    commit(MISSING_HOTKEY, randomBytes(20).toString('hex'));
    await expect(service.submissionOf(MISSING_HOTKEY)).rejects.toThrow('is not in the Gravity');

    const pushed = remote.pushAs(VOTER, VOTE);
    commit(VOTER, pushed);
    const submission = await service.submissionOf(VOTER);

    expect(submission.sha).toBe(pushed);
    expect(submission.submitted).toEqual(JSON.parse(VOTE));
    expect(fetched()).toEqual({ branch: 2, branches: 1 });
  });
});
