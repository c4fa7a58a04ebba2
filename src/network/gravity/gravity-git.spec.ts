import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { createServer, Server } from 'node:https';
import { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createGravityRemote, GravityRemote } from '../../../test/support/gravity-remote';
import { GitError } from './git';
import { GravityUnavailableError } from './gravity-errors';
import { GravityGit, MAX_PREFERENCES_BYTES } from './gravity-git';

const TOKEN = 'ghp_test_token_0123456789abcdef';
const HEADER = `Basic ${Buffer.from(`x-access-token:${TOKEN}`).toString('base64')}`;

/** A pkt-line of git's smart HTTP protocol: 4 hex digits of length (itself included), then text. */
function pktLine(text: string): string {
  return `${(text.length + 4).toString(16).padStart(4, '0')}${text}`;
}

/**
 * A self-signed certificate for 127.0.0.1, made by openssl. Without openssl the spec fails, as
 * it does without git: a token-leak test that returned early would assert nothing.
 */
function selfSigned(directory: string): { key: Buffer; cert: Buffer } {
  try {
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'rsa:2048',
        '-nodes',
        '-days',
        '1',
        '-subj',
        '/CN=127.0.0.1',
        '-keyout',
        join(directory, 'key.pem'),
        '-out',
        join(directory, 'cert.pem'),
      ],
      { stdio: 'ignore' },
    );
  } catch (error) {
    throw new Error(
      `openssl could not make the test's certificate (${(error as Error).message}): ` +
        'install openssl (the https test needs it, as the rest need git)',
    );
  }
  return {
    key: readFileSync(join(directory, 'key.pem')),
    cert: readFileSync(join(directory, 'cert.pem')),
  };
}

describe(GravityGit.name, () => {
  let directory: string;
  let server: Server;
  const authorizations: (string | undefined)[] = [];

  beforeAll(async () => {
    directory = mkdtempSync(join(tmpdir(), 'gravity-https-'));
    const tls = selfSigned(directory);
    // A remote that reads the credential and answers with an error quoting it back, as a
    // misconfigured proxy might: what git prints of it must not carry the token.
    server = createServer(tls, (request, response) => {
      authorizations.push(request.headers.authorization);
      response.writeHead(200, { 'Content-Type': 'application/x-git-upload-pack-advertisement' });
      response.end(pktLine(`ERR refused ${TOKEN} (${HEADER})\n`));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  });
  afterAll(async () => {
    await new Promise((resolve) => server?.close(resolve) ?? resolve(undefined));
    rmSync(directory, { recursive: true, force: true });
  });

  it('sends the token as an HTTP header and never repeats it in an error', async () => {
    const { port } = server.address() as AddressInfo;
    const gravity = new GravityGit({
      repoUrl: `https://127.0.0.1:${port}/gravity.git`,
      branch: 'main',
      token: TOKEN,
      dataDir: join(directory, 'data'),
    });
    process.env.GIT_SSL_NO_VERIFY = 'true';
    let failure: unknown;
    try {
      await gravity.publish('5F4tQyWrhfGVcNhoqeiNsR6KjD4wMZ2kfhLj4oHYuyHbZAc3', '[]');
    } catch (error) {
      failure = error;
    } finally {
      delete process.env.GIT_SSL_NO_VERIFY;
    }
    expect(authorizations).toContain(HEADER);
    expect(failure).toBeInstanceOf(GravityUnavailableError);
    const cause = (failure as Error).cause as GitError;
    expect(cause).toBeInstanceOf(GitError);
    const { message } = failure as Error;
    expect(message).toContain('refused [redacted]');
    for (const text of [message, cause.message, cause.output]) {
      expect(text).not.toContain(TOKEN);
      expect(text).not.toContain(HEADER.slice('Basic '.length));
    }
    // Nor is it written anywhere in the clone.
    const config = readFileSync(join(gravity.directory, 'config'), 'utf8');
    expect(config).not.toContain(TOKEN);
  });
});

/**
 * Reading votes from a local bare repository (file://), as the subnet's reader would, and
 * publishing ours to it.
 */
describe(`${GravityGit.name} on a local bare repository`, () => {
  const HOTKEY = '5F4tQyWrhfGVcNhoqeiNsR6KjD4wMZ2kfhLj4oHYuyHbZAc3';
  let remote: GravityRemote;
  let dataDir: string;
  let gravity: GravityGit;

  beforeEach(() => {
    remote = createGravityRemote('main');
    dataDir = mkdtempSync(join(tmpdir(), 'gravity-read-'));
    gravity = new GravityGit({
      repoUrl: remote.url,
      branch: 'main',
      token: undefined,
      dataDir,
    });
  });
  afterEach(() => {
    remote.remove();
    rmSync(dataDir, { recursive: true, force: true });
  });

  // dynamic_desirability/desirability_retrieval.py get_json runs `git fetch --all` and checks
  // the committed SHA out: a vote committed on any branch is read.
  it('reads a file at a commit on another branch than the one it publishes on', async () => {
    const sha = remote.pushAsOnBranch('side', HOTKEY, '[{"id": "a"}]');

    expect(await gravity.preferencesAt(HOTKEY, sha, Date.now())).toEqual({
      kind: 'file',
      text: '[{"id": "a"}]',
    });
    expect(remote.head()).not.toBe(sha);
  });

  // The subnet's reader opens the file as UTF-8 text (desirability_retrieval.py get_json at
  // 000322e2: open(file_path, 'r'), json.load): bytes that are not UTF-8 raise
  // UnicodeDecodeError, which get_json does not catch, and run_retrieval falls back to
  // default.json for every vote. The file must not be read with U+FFFD in their place.
  it('says not-utf8 for a file whose bytes are not UTF-8 text', async () => {
    const sha = remote.pushAs(HOTKEY, Buffer.from('[{"id": "caf\u00e9"}]', 'latin1'));

    expect(await gravity.preferencesAt(HOTKEY, sha, Date.now())).toEqual({
      kind: 'not-utf8',
    });
  });

  // Another validator's file is anyone's bytes: one past what the network's readers take is
  // sized, never read into memory (`git show` was given room for all of it).
  it('says too-large for a file past MAX_PREFERENCES_BYTES, without reading it', async () => {
    const sha = remote.pushAs(HOTKEY, Buffer.alloc(MAX_PREFERENCES_BYTES + 1, ' '));

    const read = await gravity.preferencesAt(HOTKEY, sha, Date.now());
    // Its kind first: a failure's diff of 32 MB of text would take jest minutes.
    expect(read.kind).toBe('too-large');
    expect(read).toEqual({ kind: 'too-large', bytes: MAX_PREFERENCES_BYTES + 1 });
  });

  // The SHA and the hotkey are the chain's (any validator's commitment): an argument git would
  // take as an option, or a path out of the preferences folder, is never given to git.
  it('refuses a SHA or a hotkey that is not one before git is run', async () => {
    const sha = remote.pushAs(HOTKEY, Buffer.from('[]'));
    await expect(gravity.preferencesAt(HOTKEY, '--output=/tmp/x', Date.now())).rejects.toThrow(
      'not a git SHA',
    );
    await expect(gravity.preferencesAt('../../etc/passwd', sha, Date.now())).rejects.toThrow(
      'not an ss58 hotkey',
    );
    await expect(gravity.onBranch(`${sha} --all`)).rejects.toThrow('not a git SHA');
    await expect(gravity.publish('-x', '[]')).rejects.toThrow('not an ss58 hotkey');
    expect(readdirSync(dataDir)).toEqual([]);
  });

  // Read as bytes, then decoded as UTF-8: non-ASCII text arrives as written, and a BOM stays
  // (the subnet's json.load fails on it, and so must JSON.parse).
  it('reads UTF-8 text as written, keeping a BOM', async () => {
    const text = '[{"label": "#caf\u00e9 \u{1F680}"}]';
    const sha = remote.pushAs(HOTKEY, Buffer.from(text, 'utf8'));
    expect(await gravity.preferencesAt(HOTKEY, sha, Date.now())).toEqual({ kind: 'file', text });

    const withBom = remote.pushAs(HOTKEY, Buffer.from(`\uFEFF${text}`, 'utf8'));
    expect(await gravity.preferencesAt(HOTKEY, withBom, Date.now())).toEqual({
      kind: 'file',
      text: `\uFEFF${text}`,
    });
  });

  it('says no-commit for a SHA on no branch, fetching each once for callers of one pass', async () => {
    const since = Date.now();
    const missing = '0123456789abcdef0123456789abcdef01234567';

    expect(await gravity.preferencesAt(HOTKEY, missing, since)).toEqual({ kind: 'no-commit' });
    // A second vote naming a branch commit made since: this pass fetched already, so it is not
    // seen.
    const later = remote.pushAsOnBranch('side', HOTKEY, '[]');
    expect(await gravity.preferencesAt(HOTKEY, later, since)).toEqual({ kind: 'no-commit' });
    // Nor is one pushed to the branch itself since: the branch was fetched in this pass too.
    const onBranch = remote.pushAs(HOTKEY, '[]');
    expect(await gravity.preferencesAt(HOTKEY, onBranch, since)).toEqual({
      kind: 'no-commit',
    });
    expect(await gravity.preferencesAt(HOTKEY, later, Date.now() + 1)).toEqual({
      kind: 'file',
      text: '[]',
    });
  });

  // The subnet's reader checks a committed SHA out after `git fetch --all`: a commit a force push
  // dropped is not found by a reader that clones afresh, though our clone keeps its objects.
  it('says whether the remote branch still has a commit once its history was rewritten', async () => {
    const before = remote.head();
    const { sha } = await gravity.publish(HOTKEY, '[]');
    expect(await gravity.onBranch(sha)).toBe(true);
    expect(await gravity.onBranch(before, { fetched: true })).toBe(true);

    remote.rewind(before);
    expect(await gravity.onBranch(sha, { fetched: true })).toBe(true);
    expect(await gravity.onBranch(sha)).toBe(false);
    expect(await gravity.onBranch('0123456789abcdef0123456789abcdef01234567')).toBe(false);
  });

  // The remote's hook stands for a protected branch (GitHub answers "protected branch hook
  // declined" or a pre-receive hook's refusal): the same push would be refused again.
  it('fails at once, with the repository’s reason, when a hook refuses the push', async () => {
    const calls = join(dataDir, 'hook-calls');
    writeFileSync(
      join(fileURLToPath(remote.url), 'hooks', 'pre-receive'),
      `#!/bin/sh\necho refused >> '${calls}'\n` +
        `echo 'GH006: Protected branch update failed for refs/heads/main.' >&2\nexit 1\n`,
      { mode: 0o755 },
    );

    const failure = await gravity.publish(HOTKEY, '[]').catch((error: Error) => error);

    expect(failure).toBeInstanceOf(GravityUnavailableError);
    expect((failure as Error).message).toMatch(
      /push refused by its rules \(retried after the usual wait\): \[remote rejected\] \(pre-receive hook declined\); remote: GH006: Protected branch update failed/,
    );
    expect(readFileSync(calls, 'utf8')).toBe('refused\n');
  });

  it('leaves the branch it publishes on where the remote has it', async () => {
    remote.pushAsOnBranch('side', HOTKEY, '[]');
    const other = remote.pushAs('5GrwvaEF5zXb26Fz9rcQpDWS57CtERHpNehXCPcNoHGKutQY', '[]');
    await gravity.preferencesAt(HOTKEY, other, Date.now());

    const published = await gravity.publish(HOTKEY, '[{"id": "b"}]');

    expect(remote.parents(published.sha)).toEqual([other]);
    expect(remote.fileAt(remote.head(), HOTKEY)).toBe('[{"id": "b"}]');
  });

  // Several validators push to one branch: a push refused because the branch moved since our
  // fetch is redone on top of the new head, up to 5 pushes in all; nothing else is retried.
  describe('when the branch moves between its fetch and its push', () => {
    const OTHER = '5GrwvaEF5zXb26Fz9rcQpDWS57CtERHpNehXCPcNoHGKutQY';
    const OURS = '[{"id": "ours"}]';

    /**
     * Runs `meanwhile(attempt)` between our fetch and each push (attempt 1, 2, …); answers the
     * count of pushes tried so far.
     */
    function beforeEachPush(meanwhile: (attempt: number) => Promise<void> | void): () => number {
      let attempts = 0;
      gravity.beforePush = async () => {
        attempts += 1;
        await meanwhile(attempts);
      };
      return () => attempts;
    }

    /** Another validator pushes its file before each of our first `times` pushes. */
    function othersPushFirst(times: number): { pushes: () => number; theirs: string[] } {
      const theirs: string[] = [];
      const pushes = beforeEachPush((attempt) => {
        if (attempt <= times) theirs.push(remote.pushAs(OTHER, `[{"id": "${attempt}"}]`));
      });
      return { pushes, theirs };
    }

    /** Our commit landed on top of `parent`, the other validator's file kept beside ours. */
    function expectOnTopOf(sha: string, parent: string) {
      expect(remote.head()).toBe(sha);
      expect(remote.parents(sha)).toEqual([parent]);
      expect(remote.fileAt(sha, HOTKEY)).toBe(OURS);
      expect(remote.fileAt(sha, OTHER)).toBe(remote.fileAt(parent, OTHER));
    }

    // git answers `[rejected] (fetch first)`: the remote's new head is unknown to the clone.
    it('redoes a push refused as fetch first on top of the commit pushed meanwhile', async () => {
      const { pushes, theirs } = othersPushFirst(1);

      const published = await gravity.publish(HOTKEY, OURS);

      expect(published.pushed).toBe(true);
      expect(pushes()).toBe(2);
      expectOnTopOf(published.sha, theirs[0]);
    });

    // git answers `[rejected] (non-fast-forward)`: the clone knows the new head already, as it
    // does when the job reading votes fetched the branch between our fetch and our push.
    it('redoes a push refused as non-fast-forward on top of the head the clone fetched meanwhile', async () => {
      let theirs = '';
      const pushes = beforeEachPush(async (attempt) => {
        if (attempt > 1) return;
        theirs = remote.pushAs(OTHER, '[]');
        await gravity.preferencesAt(OTHER, theirs, Date.now() + 1);
      });

      const published = await gravity.publish(HOTKEY, OURS);

      expect(pushes()).toBe(2);
      expectOnTopOf(published.sha, theirs);
    });

    // Two pushes at once: the remote holds the branch's lock for the other one, and answers
    // ours `[remote rejected] (failed to update ref)` (GitHub: `cannot lock ref`). Once the
    // lock is released, ours goes through.
    it('redoes a push that lost the race for the branch’s lock to another push', async () => {
      const lock = join(fileURLToPath(remote.url), 'refs', 'heads', 'main.lock');
      const head = remote.head();
      const pushes = beforeEachPush((attempt) => {
        if (attempt === 1) writeFileSync(lock, '');
        else if (attempt === 2) unlinkSync(lock);
      });

      const published = await gravity.publish(HOTKEY, OURS);

      expect(pushes()).toBe(2);
      expect(remote.head()).toBe(published.sha);
      expect(remote.parents(published.sha)).toEqual([head]);
    });

    // What the operator reads in the publication's last_error, to be retried later as a whole.
    it('gives up after 5 refused pushes, saying the branch moved', async () => {
      const { pushes, theirs } = othersPushFirst(Infinity);

      const failure = await gravity.publish(HOTKEY, OURS).catch((error: Error) => error);

      expect((failure as Error).message).toMatch(
        /^push refused, the branch moved: .*\[rejected\] \(fetch first\)/s,
      );
      expect(pushes()).toBe(5);
      expect(remote.head()).toBe(theirs[4]);
      expect(remote.commitsOf(HOTKEY)).toEqual([]);
    });

    // Another replica of this gateway published the same vote first: nothing is left to push.
    it('pushes nothing when the commit it lost to holds the same file', async () => {
      let theirs = '';
      const pushes = beforeEachPush(() => {
        theirs ||= remote.pushAs(HOTKEY, OURS);
      });

      expect(await gravity.publish(HOTKEY, OURS)).toEqual({ sha: theirs, pushed: false });
      expect(pushes()).toBe(1);
      expect(remote.head()).toBe(theirs);
    });
  });
});
