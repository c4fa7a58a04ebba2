import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Devnet, DevnetOptions, MinerSpec, startDevnet } from '../../src/devnet/devnet';
import { DataItem } from '../../src/network/protocol';
import { testValidatorHotkey } from './test-app';

export interface TestNetwork {
  devnet: Devnet;
  /** Environment for startTestApp pointing the service at this network. */
  env: Record<string, string>;
  stop(): Promise<void>;
}

/**
 * A devnet of real axons on loopback, with its metagraph in a temporary file. Its metagraph
 * lists `validatorHotkeys` (default: the test apps' key) as validators whose calls miners take.
 * `options`: every miner stored-only, or the devnet's clock (that of CLOCK_SIMULATION).
 */
export async function startTestNetwork(
  miners: number | MinerSpec[],
  seed = 7,
  validatorHotkeys: readonly string[] = [testValidatorHotkey()],
  options: Pick<DevnetOptions, 'storedOnly' | 'simulation'> = {},
): Promise<TestNetwork> {
  const directory = mkdtempSync(join(tmpdir(), 'gateway-devnet-'));
  const devnet = await startDevnet({
    miners,
    seed,
    metagraphFile: join(directory, 'metagraph.json'),
    validatorHotkeys,
    ...options,
  });
  return {
    devnet,
    env: { METAGRAPH_FILE: devnet.metagraphFile! },
    stop: async () => {
      await devnet.stop();
      rmSync(directory, { recursive: true, force: true });
    },
  };
}

export interface ExpectedQuery {
  source: 'X' | 'REDDIT';
  usernames?: string[];
  keywords?: string[];
  /** `all` (default) or `any`. */
  keywordMode?: 'all' | 'any';
  start?: Date;
  end?: Date;
}

/**
 * The matching rules written out plainly, independently of the service's matcher, to compute
 * expected answers by brute force over the corpus.
 */
export function matchesPlainly(item: DataItem, query: ExpectedQuery): boolean {
  if (item.source !== query.source) return false;
  const time = Date.parse(item.datetime);
  if (query.start && time < query.start.getTime()) return false;
  if (query.end && time > query.end.getTime()) return false;
  const author = (item.source === 'X' ? item.user.username : item.username).toLowerCase();
  if (
    query.usernames?.length &&
    !query.usernames.some((name) => name.replace(/^@/, '').toLowerCase() === author)
  )
    return false;
  const keywords = query.keywords ?? [];
  const holds = (keyword: string): boolean => {
    const lower = keyword.toLowerCase();
    if (item.source === 'REDDIT') {
      const selector = /^(?:\/?r\/|\/)([a-z0-9_]+)$/i.exec(keyword);
      if (selector) return item.communityName.toLowerCase() === `r/${selector[1].toLowerCase()}`;
      return `${item.title ?? ''} ${item.body}`.toLowerCase().includes(lower);
    }
    const hashtags = item.tweet.hashtags.map((tag) => tag.toLowerCase());
    return (
      item.text.toLowerCase().includes(lower) || (lower.startsWith('#') && hashtags.includes(lower))
    );
  };
  if (keywords.length === 0) return true;
  return query.keywordMode === 'any' ? keywords.some(holds) : keywords.every(holds);
}
