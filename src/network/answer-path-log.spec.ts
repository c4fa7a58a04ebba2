import { Logger } from '@nestjs/common';
import { ANSWER_PATH_LINE_MS, AnswerPathLog } from './answer-path-log';

const BUDGET =
  "on-demand queries are answered from stored data: no miner with an OnDemandRequest call left in this validator's budget answered (MINER_CALL_BUDGETS)";

describe(AnswerPathLog.name, () => {
  let now = 0;
  let lines: string[];
  let log: AnswerPathLog;

  beforeEach(() => {
    now = 1_000;
    lines = [];
    jest
      .spyOn(Logger.prototype, 'log')
      .mockImplementation((message: unknown) => void lines.push(String(message)));
    log = new AnswerPathLog(() => now);
  });
  afterEach(() => jest.restoreAllMocks());

  it('says nothing while queries are answered live from the start', () => {
    log.note('live');
    log.note('live');
    expect(lines).toEqual([]);
  });

  it('says when queries go to stored data, once, and when they are live again', () => {
    log.note('live');
    log.note('budget');
    log.note('budget');
    expect(lines).toEqual([BUDGET]);
    now += ANSWER_PATH_LINE_MS;
    log.note('live');
    log.note('live');
    expect(lines).toEqual([BUDGET, 'on-demand queries are answered live by miners again']);
  });

  // A budget's call freeing up in its rolling window, or a flaky round, changes the path at
  // every query: a line each would flood the log (a review's finding).
  it('writes at most one line per interval, counting the changes held back', () => {
    log.note('budget');
    for (let query = 0; query < 10; query++) log.note(query % 2 === 0 ? 'live' : 'budget');
    expect(lines).toEqual([BUDGET]);
    now += ANSWER_PATH_LINE_MS;
    log.note('live');
    expect(lines).toEqual([
      BUDGET,
      'on-demand queries are answered live by miners again (11 changes between live and stored since the last line)',
    ]);
    now += ANSWER_PATH_LINE_MS;
    log.note('live');
    expect(lines).toHaveLength(2);
  });

  it('says nothing of a mode configured to stored data', () => {
    log.note('configured');
    expect(lines).toEqual([]);
  });
});
