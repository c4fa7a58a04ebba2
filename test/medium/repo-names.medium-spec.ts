import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Logger } from '@nestjs/common';
import { ReposRepository } from '../../src/modules/repos/repos.repository';
import { ReposService } from '../../src/modules/repos/repos.service';
import { MediumDatabase, openMediumDatabase } from '../support/medium-database';
import { testConfig } from '../support/test-config';

/**
 * A row Postgres cannot store, or too long for the table's index, is skipped: it made the whole
 * ingest fail, so the stored list (or a 503 on a fresh database) stood for good (an audit's
 * finding).
 */
describe(`${ReposService.name} with rows the table cannot hold`, () => {
  let medium: MediumDatabase;
  let directory: string;
  let warned: jest.SpyInstance;

  beforeAll(async () => {
    medium = await openMediumDatabase({ own: 'reponames' });
    directory = mkdtempSync(join(tmpdir(), 'repo-names-medium-'));
  });
  afterAll(async () => {
    await medium.close();
    rmSync(directory, { recursive: true, force: true });
  });
  beforeEach(() => {
    jest.spyOn(Logger.prototype, 'log').mockImplementation(() => undefined);
    jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
    warned = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
  });
  afterEach(() => jest.restoreAllMocks());

  /**
   * Ingests a JSON lines file of these `repo_name` values (a Buffer: its bytes, as they are) as
   * start-up does, to the end.
   */
  async function ingest(values: (string | Buffer | null)[]): Promise<ReposService> {
    const path = join(directory, 'hf_validation.jsonl');
    const line = (value: string | Buffer | null) =>
      Buffer.isBuffer(value)
        ? Buffer.concat([Buffer.from('{"repo_name": "'), value, Buffer.from('"}\n')])
        : Buffer.from(`${JSON.stringify({ repo_name: value })}\n`);
    writeFileSync(path, Buffer.concat(values.map(line)));
    const service = new ReposService(
      testConfig({ repos: { hfResultsPath: path } }),
      new ReposRepository(medium.dataSource),
    );
    await service.onApplicationBootstrap();
    await service.onModuleDestroy(); // waits for the ingest
    return service;
  }

  it('loads the good names of a file whose other rows hold U+0000, a lone surrogate or 3000 bytes', async () => {
    const service = await ingest([
      'alice/x',
      'nul/\u0000',
      'lone/\ud800',
      '名'.repeat(1000),
      'bob/y',
      'nul/again\u0000',
      null,
    ]);

    expect(await service.listRepoNames()).toEqual({ count: 2, repo_names: ['alice/x', 'bob/y'] });
    // One line for the whole file, however many rows.
    expect(warned.mock.calls).toEqual([
      [
        expect.stringMatching(
          /: rows skipped, 3 not storable \(the first is row 2\), 1 too long \(the first is row 4\)$/,
        ),
      ],
    ]);
  });

  // Decoded, they became U+FFFD, and the name was listed so (an audit's finding).
  it('skips the names whose bytes are not UTF-8, counted in the same warning', async () => {
    const service = await ingest([
      'alice/x',
      Buffer.from([0x61, 0x2f, 0xff]),
      'bob/y',
      Buffer.from([0x61, 0x2f, 0xc3]),
      'nul/\u0000',
    ]);

    expect(await service.listRepoNames()).toEqual({ count: 2, repo_names: ['alice/x', 'bob/y'] });
    expect(warned.mock.calls).toEqual([
      [
        expect.stringMatching(
          /: rows skipped, 2 not UTF-8 \(the first is row 2\), 1 not storable \(the first is row 5\)$/,
        ),
      ],
    ]);
  });
});
