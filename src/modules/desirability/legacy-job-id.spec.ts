import { Source } from '../../common/source';
import { TaskState } from '../tasks/task.types';
import { WeightedJob } from './desirability.types';
import {
  LabelTask,
  legacyGeneration,
  legacyIdClashes,
  legacyJobId,
  withCurrentLegacyIds,
} from './legacy-job-id';

const NOW = new Date('2026-11-30T12:00:00Z');
const LATER = new Date('2026-12-03T12:00:00Z');
const EARLIER = new Date('2026-11-29T12:00:00Z');

function legacyJob(platform: Source, label: string, weight = 1): WeightedJob {
  const id = legacyJobId(platform, label);
  return {
    id,
    platform,
    label,
    keyword: null,
    postStart: null,
    postEnd: null,
    weight,
    legacy: true,
  };
}

function task(id: string, label: string, state: TaskState, expires = LATER): LabelTask {
  return {
    id,
    platform: label.startsWith('#') ? 'x' : 'reddit',
    label,
    state,
    expires_at: expires,
  };
}

describe('legacy job ids', () => {
  it('names later generations apart, within the id rules, and reads their generation back', () => {
    expect(legacyJobId('reddit', 'r/bitcoin', 2)).toMatch(/^reddit-r-bitcoin-g2-[0-9a-f]{12}$/);
    // The digest names the label: every generation of a label ends with the same one.
    expect(legacyJobId('reddit', 'r/bitcoin', 2).slice(-12)).toBe(
      legacyJobId('reddit', 'r/bitcoin').slice(-12),
    );
    for (const label of [`#${'x'.repeat(139)}`, `#${'ü'.repeat(139)}`, '#🚀', '#a.b-c']) {
      for (const generation of [1, 2, 10, 999, 123_456_789]) {
        const id = legacyJobId('x', label, generation);
        expect(id.length).toBeLessThanOrEqual(60);
        expect(id).not.toMatch(/[/\\]|--/);
        expect(legacyGeneration(id, 'x', label)).toBe(generation);
      }
    }
    expect(legacyJobId('reddit', 'r/bitcoin', 1)).toBe(legacyJobId('reddit', 'r/bitcoin'));
  });

  // Ids are stored with tasks and votes: a label must get the same id from every release, so
  // the slug's length (40 characters) is part of the id, not a detail.
  it('cuts a long label’s slug to 40 characters', () => {
    expect(legacyJobId('x', `#${'a'.repeat(139)}`)).toMatch(/^x-a{40}-[0-9a-f]{12}$/);
    expect(legacyJobId('x', `#${'a'.repeat(139)}`, 7)).toMatch(/^x-a{37}-g7-[0-9a-f]{12}$/);
  });

  it("does not take another label's ids, or an id given by hand, for a generation", () => {
    const id = legacyJobId('x', '#tao', 3);
    expect(legacyGeneration(id, 'x', '#ai')).toBeUndefined();
    expect(legacyGeneration(id, 'reddit', '#tao')).toBeUndefined();
    expect(legacyGeneration('my-tao-job', 'x', '#tao')).toBeUndefined();
    // A label whose slug ends like a generation is not mistaken for one.
    expect(legacyGeneration(legacyJobId('x', '#tao-g2'), 'x', '#tao')).toBeUndefined();
    expect(legacyGeneration(legacyJobId('x', '#tao-g2'), 'x', '#tao-g2')).toBe(1);
  });
});

describe('withCurrentLegacyIds', () => {
  const bitcoin = legacyJob('reddit', 'r/bitcoin');
  const gen = (generation: number) => legacyJobId('reddit', 'r/bitcoin', generation);

  it('keeps the first id for a label never registered, and leaves jobs with given ids alone', () => {
    const given: WeightedJob = { ...bitcoin, id: 'given', legacy: undefined };
    const endedGiven = task('given', 'r/bitcoin', 'completed');
    expect(withCurrentLegacyIds([bitcoin, given], [endedGiven], NOW)).toEqual([bitcoin, given]);
  });

  it("joins the label's latest generation while it runs", () => {
    const tasks = [task(gen(1), 'r/bitcoin', 'completed'), task(gen(2), 'r/bitcoin', 'active')];
    expect(withCurrentLegacyIds([bitcoin], tasks, NOW)).toEqual([{ ...bitcoin, id: gen(2) }]);
    expect(withCurrentLegacyIds([bitcoin], [task(gen(1), 'r/bitcoin', 'active')], NOW)).toEqual([
      bitcoin,
    ]);
  });

  it('runs the label again under the next generation once its latest task has ended', () => {
    for (const ended of [
      task(gen(3), 'r/bitcoin', 'completed'),
      task(gen(3), 'r/bitcoin', 'compiling'),
      task(gen(3), 'r/bitcoin', 'failed'),
      // Past its seven days, not yet claimed by the compiler.
      task(gen(3), 'r/bitcoin', 'active', EARLIER),
      task(gen(3), 'r/bitcoin', 'active', NOW),
    ]) {
      const tasks = [task(gen(1), 'r/bitcoin', 'completed'), ended];
      expect(withCurrentLegacyIds([bitcoin], tasks, NOW)).toEqual([{ ...bitcoin, id: gen(4) }]);
    }
  });

  it('skips the ids taken by other tasks or jobs for a new generation, never for a running one', () => {
    const ended = [task(gen(1), 'r/bitcoin', 'completed')];
    expect(withCurrentLegacyIds([bitcoin], ended, NOW, new Set([gen(2), gen(3)]))).toEqual([
      { ...bitcoin, id: gen(4) },
    ]);
    // A label never registered skips a first id held by another task.
    expect(withCurrentLegacyIds([bitcoin], [], NOW, new Set([gen(1)]))).toEqual([
      { ...bitcoin, id: gen(2) },
    ]);
    const running = [task(gen(1), 'r/bitcoin', 'active')];
    expect(withCurrentLegacyIds([bitcoin], running, NOW, new Set([gen(1)]))).toEqual([bitcoin]);
  });

  it("counts only the label's own generations: other labels and ids given by hand are not", () => {
    const ethereum = legacyJob('reddit', 'r/ethereum');
    const tasks = [
      task(gen(1), 'r/bitcoin', 'completed'),
      task('my-bitcoin', 'r/bitcoin', 'active'),
      task(legacyJobId('reddit', 'r/ethereum', 5), 'r/ethereum', 'active'),
    ];
    expect(withCurrentLegacyIds([bitcoin, ethereum], tasks, NOW)).toEqual([
      { ...bitcoin, id: gen(2) },
      { ...ethereum, id: legacyJobId('reddit', 'r/ethereum', 5) },
    ]);
  });
});

describe('legacyIdClashes', () => {
  const bitcoin = legacyJob('reddit', 'r/bitcoin');
  const gen = (generation: number) => legacyJobId('reddit', 'r/bitcoin', generation);
  const given = (id: string): WeightedJob => ({
    ...legacyJob('reddit', 'r/btc'),
    id,
    legacy: undefined,
  });
  /** The submission's jobs resolved as DesirabilityService resolves them: given ids taken. */
  const resolved = (jobs: WeightedJob[], tasks: LabelTask[]) =>
    withCurrentLegacyIds(
      jobs,
      tasks,
      NOW,
      new Set(jobs.filter((job) => !job.legacy).map((job) => job.id)),
    );

  it("finds none when a label's new generation skips the id a job is given", () => {
    for (const tasks of [[], [task(gen(1), 'r/bitcoin', 'completed')]]) {
      const jobs = resolved([bitcoin, given(gen(1))], tasks);
      expect(jobs.map((job) => job.id)).toEqual([gen(2), gen(1)]);
      expect(legacyIdClashes(jobs)).toEqual([]);
    }
  });

  it('refuses the job given the id of the running task a label joins, in either order', () => {
    const running = [task(gen(1), 'r/bitcoin', 'completed'), task(gen(2), 'r/bitcoin', 'active')];
    const message =
      `id '${gen(2)}' is already used by another job of this submission: the reddit label ` +
      `'r/bitcoin' of a legacy entry runs under it (a label joins its task while it runs)`;
    expect(legacyIdClashes(resolved([bitcoin, given(gen(2))], running))).toEqual([
      { index: 1, message },
    ]);
    expect(legacyIdClashes(resolved([given(gen(2)), bitcoin], running))).toEqual([
      { index: 0, message },
    ]);
  });

  // A label may hold format characters, and one stored before labels had to be printable control
  // characters too: quoted as quotedId quotes ids.
  it("quotes the label's control and format characters as escapes", () => {
    const label = 'r/\u202eabc\u001b[31m';
    const id = legacyJobId('reddit', label, 2);
    const running = [task(id, label, 'active')];
    const [clash] = legacyIdClashes(resolved([legacyJob('reddit', label), given(id)], running));
    expect(clash.message).toBe(
      `id '${id}' is already used by another job of this submission: the reddit label ` +
        "'r/\\u202eabc\\u001b[31m' of a legacy entry runs under it (a label joins its task while it runs)",
    );
  });
});
