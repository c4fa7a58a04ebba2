import { generateCorpus } from '../devnet/corpus';
import { toWireEntity } from '../devnet/miner-records';
import {
  CheckedAnswer,
  checkAnswer,
  copyKey,
  credibilityScore,
  isMostlyDropped,
  isUsableAnswer,
  mergeAnswers,
} from './answer-checks';
import { itemKey } from './item-uri';
import { DataItem, RedditItem, XItem } from './protocol';
import { compileQuery } from './query-matcher';
import { WireDataEntity } from './sn13/entities';

const corpus = generateCorpus({
  seed: 13,
  now: new Date('2024-06-01T00:00:00Z'),
  size: { x: 120, reddit: 40 },
});
/** A limit no answer here reaches. */
const NO_LIMIT = Number.MAX_SAFE_INTEGER;
/** Miner 1's answer checked, with no limit in the way. */
const checkedFromMiner1 = (
  entities: readonly unknown[],
  matcher: Parameters<typeof checkAnswer>[2],
  source: Parameters<typeof checkAnswer>[3],
) => checkAnswer(minerOf(1), entities, matcher, source, NO_LIMIT);
const xPosts = corpus.items.filter((item): item is XItem => item.source === 'X');
const redditItems = corpus.items.filter((item): item is RedditItem => item.source === 'REDDIT');
const everyXPost = compileQuery({ source: 'X' });

/** Corpus X post number `index`, re-dated so that tests control the order. */
function postAt(index: number, datetime: string): XItem {
  return { ...xPosts[index], datetime };
}

/** Miner `uid`, of a coldkey of its own unless told. */
function minerOf(uid: number, coldkey = `ck${uid}`) {
  return { uid, coldkey };
}

function answerOf(
  uid: number,
  valid: DataItem[],
  dropped = 0,
  coldkey = minerOf(uid).coldkey,
): CheckedAnswer {
  return { uid, coldkey, returned: valid.length + dropped, valid, dropped };
}

const uris = (items: readonly DataItem[]) => items.map((item) => item.uri);

describe(checkAnswer.name, () => {
  it('keeps the items matching the query and drops the rest, counting both', () => {
    const hashtag = xPosts.find((post) => post.label !== null)!.label!;
    const matcher = compileQuery({ source: 'X', keywords: [hashtag] });

    const answer = checkAnswer(minerOf(7), xPosts.map(toWireEntity), matcher, 'x', NO_LIMIT);

    const tagged = xPosts.filter((post) =>
      post.tweet.hashtags.some((tag) => tag.toLowerCase() === hashtag),
    );
    expect(answer.uid).toBe(7);
    expect(answer.returned).toBe(xPosts.length);
    expect(answer.valid.length).toBeGreaterThan(0);
    expect(uris(answer.valid)).toEqual(expect.arrayContaining(uris(tagged)));
    expect(answer.valid.every((post) => matcher.matches(post))).toBe(true);
    expect(answer.dropped).toBe(xPosts.length - answer.valid.length);
    expect(answer.dropped).toBeGreaterThan(0);
  });

  // Counted by check in gateway_miner_items_dropped_total: which check, not only how many.
  it('says which check dropped each item, the first it failed', () => {
    const tagged = xPosts.find((post) => post.label !== null)!;
    const matcher = compileQuery({ source: 'X', keywords: [tagged.label!] });
    const untagged = xPosts.find((post) => !matcher.matches(post))!;
    const misnamed = {
      ...tagged,
      uri: `javascript:alert(1)//x.com/a/status/${tagged.tweet.id}`,
    };
    const entities = [tagged, tagged, untagged, misnamed].map(toWireEntity);

    const answer = checkedFromMiner1([...entities, null, 'junk'], matcher, 'x');

    expect(uris(answer.valid)).toEqual([tagged.uri]);
    expect(answer.droppedBy).toEqual({
      malformed: 2,
      wrong_uri: 1,
      no_match: 1,
      duplicate: 1,
      over_limit: 0,
    });
    expect(answer.dropped).toBe(5);
  });

  // 15,000 entities for a limit of 1,000, each converted on the event loop, held health for
  // seconds (an event-loop audit).
  it('reads no entity past the limit the miner was asked for, and drops them as over_limit', () => {
    const entities = xPosts.slice(0, 6).map(toWireEntity);
    const read: number[] = [];
    const watched = entities.map((entity, index) => ({
      ...entity,
      get content() {
        read.push(index);
        return entity.content;
      },
    }));

    const answer = checkAnswer(minerOf(1), watched, everyXPost, 'x', 2);

    expect(read).toEqual([0, 1]);
    expect(answer.valid).toEqual(xPosts.slice(0, 2));
    expect(answer).toMatchObject({ returned: 6, dropped: 4 });
    expect(answer.droppedBy).toMatchObject({ over_limit: 4, malformed: 0 });
    expect(isUsableAnswer(answer)).toBe(false);
    expect(isUsableAnswer(checkAnswer(minerOf(1), entities.slice(0, 4), everyXPost, 'x', 2))).toBe(
      true,
    );
  });

  it('converts the entities back to the items the miner stored', () => {
    const answer = checkedFromMiner1(xPosts.slice(0, 5).map(toWireEntity), everyXPost, 'x');

    expect(answer.valid).toEqual(xPosts.slice(0, 5));
  });

  it('drops malformed entities even when the query would match their items', () => {
    const [good, broken] = xPosts.map(toWireEntity);
    const entities: unknown[] = [
      good,
      { ...broken, uri: undefined },
      { ...broken, datetime: 'yesterday' },
      { ...broken, content_size_bytes: -1 },
      null,
      'junk',
      42,
    ];

    const answer = checkedFromMiner1(entities, everyXPost, 'x');

    expect(uris(answer.valid)).toEqual([good.uri]);
    expect(answer).toMatchObject({ returned: 7, dropped: 6 });
  });

  it('drops a well-formed entity whose stored record is malformed', () => {
    const [good, notJson, noUsername, otherUrl] = xPosts.map(toWireEntity);
    const record = (entity: WireDataEntity) =>
      JSON.parse(entity.content) as Record<string, unknown>;
    const entities: WireDataEntity[] = [
      good,
      { ...notJson, content: '{"username": "half a record' },
      { ...noUsername, content: JSON.stringify({ ...record(noUsername), username: undefined }) },
      { ...otherUrl, content: JSON.stringify({ ...record(otherUrl), url: good.uri }) },
    ];

    const answer = checkedFromMiner1(entities, everyXPost, 'x');

    expect(uris(answer.valid)).toEqual([good.uri]);
    expect(answer).toMatchObject({ returned: 4, dropped: 3 });
  });

  it('drops entities of the other source', () => {
    const entities = [...redditItems.slice(0, 3), xPosts[0]].map(toWireEntity);

    const answer = checkedFromMiner1(entities, everyXPost, 'x');

    expect(uris(answer.valid)).toEqual([xPosts[0].uri]);
    expect(answer.dropped).toBe(3);
  });

  it('drops an X record sent under the Reddit source id', () => {
    const disguised = { ...toWireEntity(xPosts[0]), source: 1 };

    const answer = checkedFromMiner1([disguised], compileQuery({ source: 'REDDIT' }), 'reddit');

    expect(answer).toMatchObject({ valid: [], returned: 1, dropped: 1 });
  });

  it('drops a post sent twice in one answer under two spellings of its uri', () => {
    const [post] = xPosts;
    const respelled = post.uri.replace('https://x.com/', 'https://twitter.com/') + '?s=20';

    const answer = checkedFromMiner1(
      [post, { ...post, uri: respelled }].map(toWireEntity),
      everyXPost,
      'x',
    );

    expect(uris(answer.valid)).toEqual([post.uri]);
    expect(answer.dropped).toBe(1);
  });

  // An audit's finding: a real post (its id holds 2024-05-29T10:03:51Z) re-dated into the range
  // was kept, and as the same text and author it even counted as agreeing with honest copies.
  it("drops an X post re-dated into the query's range away from the time its id holds", () => {
    const id = '1795757939487670279';
    const real = {
      ...xPosts[0],
      uri: `https://x.com/${xPosts[0].user.username}/status/${id}`,
      tweet: { ...xPosts[0].tweet, id },
    };
    const range = compileQuery({
      source: 'X',
      start_date: '2026-11-20T00:00:00Z',
      end_date: '2026-11-21T00:00:00Z',
    });

    const answer = checkedFromMiner1(
      [{ ...real, datetime: '2026-11-20T10:00:00.000Z' }].map(toWireEntity),
      range,
      'x',
    );
    const honest = checkAnswer(
      minerOf(2),
      [{ ...real, datetime: '2024-05-29T10:03:51.000Z' }].map(toWireEntity),
      everyXPost,
      'x',
      NO_LIMIT,
    );

    expect(answer).toMatchObject({ valid: [], returned: 1, dropped: 1 });
    expect(honest).toMatchObject({ returned: 1, dropped: 0 });
  });

  it('drops entities whose uri does not name the item (answers become stored task items)', () => {
    const [good, script, other] = xPosts.slice(0, 3).map((post) => structuredClone(post));
    script.uri = 'javascript:alert(1)//x.com/a/status/' + script.tweet.id;
    other.uri = `https://x.com/${other.user.username}/status/${good.tweet.id}`;

    const answer = checkedFromMiner1([good, script, other].map(toWireEntity), everyXPost, 'x');

    expect(uris(answer.valid)).toEqual([good.uri]);
    expect(answer.dropped).toBe(2);
  });

  // The same digits after a 0 hold the same time, but were another key and uri: a post twice.
  it('drops an X post whose status id has a leading zero', () => {
    const post = xPosts[0];
    const id = `0${post.tweet.id}`;
    const padded = {
      ...post,
      uri: `https://x.com/${post.user.username}/status/${id}`,
      tweet: { ...post.tweet, id },
    };

    const answer = checkedFromMiner1([post, padded].map(toWireEntity), everyXPost, 'x');

    expect(uris(answer.valid)).toEqual([post.uri]);
    expect(answer.dropped).toBe(1);
  });

  it('keeps only the first copy of a uri repeated within one answer', () => {
    const [first, second] = xPosts;
    const copy = toWireEntity({ ...first, text: `${first.text} (again)` });

    const answer = checkedFromMiner1(
      [toWireEntity(first), toWireEntity(second), copy, toWireEntity(first)],
      everyXPost,
      'x',
    );

    expect(answer.valid).toEqual([first, second]);
    expect(answer).toMatchObject({ returned: 4, dropped: 2 });
  });

  it('drops a Reddit post sent twice in one answer, its id with and without its kind', () => {
    const post = redditItems.find((item) => item.dataType === 'post')!;
    const bare = { ...post, id: post.id.replace(/^t3_/, '') };
    const matcher = compileQuery({ source: 'REDDIT' });

    const answer = checkedFromMiner1([post, bare].map(toWireEntity), matcher, 'reddit');

    expect(answer.valid).toEqual([post]);
    expect(answer.dropped).toBe(1);
  });

  it('checks Reddit entities against the Reddit record shape and rules', () => {
    const subreddit = redditItems[0].label;
    const matcher = compileQuery({ source: 'REDDIT', keywords: [subreddit] });

    const answer = checkAnswer(
      minerOf(2),
      redditItems.map(toWireEntity),
      matcher,
      'reddit',
      NO_LIMIT,
    );

    const expected = redditItems.filter((item) => item.label === subreddit);
    expect(uris(answer.valid)).toEqual(uris(expected));
    expect(answer.dropped).toBe(redditItems.length - expected.length);
  });

  it('reports an empty answer as nothing returned and nothing dropped', () => {
    expect(checkAnswer(minerOf(3), [], everyXPost, 'x', NO_LIMIT)).toEqual({
      uid: 3,
      coldkey: 'ck3',
      returned: 0,
      valid: [],
      dropped: 0,
      droppedBy: { malformed: 0, wrong_uri: 0, no_match: 0, duplicate: 0, over_limit: 0 },
    });
  });
});

describe(isUsableAnswer.name, () => {
  it('counts an answer with nothing dropped', () => {
    expect(isUsableAnswer(answerOf(1, xPosts.slice(0, 3)))).toBe(true);
  });

  it('counts an answer with exactly half of its items dropped', () => {
    expect(isUsableAnswer(answerOf(1, xPosts.slice(0, 2), 2))).toBe(true);
  });

  it('does not count an answer with most of its items dropped', () => {
    expect(isUsableAnswer(answerOf(1, xPosts.slice(0, 2), 3))).toBe(false);
    expect(isUsableAnswer(answerOf(1, [], 1))).toBe(false);
  });

  // Counted, three quick empty answers ended the round before the miners holding the data
  // answered (an audit's finding).
  it('does not count an empty answer, which is not mostly dropped either', () => {
    expect(isUsableAnswer(answerOf(1, []))).toBe(false);
    expect(isMostlyDropped(answerOf(1, []))).toBe(false);
  });
});

describe(mergeAnswers.name, () => {
  const a = postAt(0, '2024-05-20T10:00:00.000Z');
  const b = postAt(1, '2024-05-20T11:00:00.000Z');
  const c = postAt(2, '2024-05-20T12:00:00.000Z');
  const d = postAt(3, '2024-05-20T13:00:00.000Z');

  // A flakiness audit: ties were broken by `localeCompare`, which follows the process's locale,
  // so replicas under different LANGs cut the limit at different posts. Descending, as the store
  // orders them, in code units: `a` before `B`, where a locale's collation puts `B` first.
  it('breaks ties by uri, descending in code-unit order, whatever the locale', () => {
    const upper = { ...a, uri: a.uri.replace(/\/status\//, '/status/B'), datetime: b.datetime };
    const lower = { ...b, uri: b.uri.replace(/\/status\//, '/status/a') };
    expect('B'.localeCompare('a')).toBeGreaterThan(0);
    expect(uris(mergeAnswers([answerOf(1, [upper, lower])], 1).items)).toEqual([lower.uri]);
    // Descending: `2` before `1`.
    const one = { ...a, uri: a.uri.replace(/\/status\//, '/status/1'), datetime: b.datetime };
    const two = { ...b, uri: b.uri.replace(/\/status\//, '/status/2') };
    expect(uris(mergeAnswers([answerOf(1, [one, two])], 1).items)).toEqual([two.uri]);
  });

  it('deduplicates items by post across answers and counts how many answers held each', () => {
    const merged = mergeAnswers([answerOf(1, [a, b]), answerOf(2, [b, c]), answerOf(3, [b])], 10);

    expect(merged.items).toHaveLength(3);
    expect(new Set(uris(merged.items))).toEqual(new Set([a.uri, b.uri, c.uri]));
    expect(merged.holders).toEqual(
      new Map([
        [copyKey(a), 1],
        [copyKey(b), 3],
        [copyKey(c), 1],
      ]),
    );
  });

  // A miner that takes real post ids and authors and rewrites the text passed every check, and
  // was counted as agreeing with the honest miners (an audit's finding).
  it('counts a copy saying something else as no corroboration, and keeps the copy most agree on', () => {
    const faked = { ...b, text: 'Buy $SCAM now', content: 'Buy $SCAM now' };
    const first = mergeAnswers([answerOf(1, [faked, a]), answerOf(2, [b]), answerOf(3, [b])], 10);

    expect(first.items.find((item) => itemKey(item) === itemKey(b))).toEqual(b);
    expect(first.holders.get(copyKey(faked))).toBe(1);
    expect(first.holders.get(copyKey(b))).toBe(2);
    expect(credibilityScore(answerOf(1, [faked, a]), first.holders)).toBe(0.5);
    expect(credibilityScore(answerOf(2, [b]), first.holders)).toBe(1);

    // One honest copy against one fake: neither corroborates, the first stays.
    const even = mergeAnswers([answerOf(1, [faked]), answerOf(2, [b])], 10);
    expect(even.items).toEqual([faked]);
    expect(even.consensus).toBe(0);
  });

  it('reads copies alike that differ only where honest scrapes differ', () => {
    const rescraped = {
      ...b,
      user: { ...b.user, username: `@${b.user.username.toUpperCase()}`, followers_count: 7 },
      tweet: { ...b.tweet, like_count: 999 },
    };
    expect(copyKey(rescraped)).toBe(copyKey(b));
  });

  // Each field copyKey compares, changed alone, makes another copy; a mutation audit found that
  // dropping the Reddit body, the X author or a comment's parent from the key failed no test.
  it('tells copies apart by each field they must agree on', () => {
    const comment = redditItems.find((item) => item.dataType === 'comment')!;
    const post = redditItems.find((item) => item.dataType === 'post')!;
    const x = xPosts[0];
    const changed: DataItem[] = [
      { ...x, text: `${x.text} (edited)` },
      { ...x, user: { ...x.user, username: `${x.user.username}_2` } },
      // Filed under another label (a hostile miner moved another hashtag first).
      { ...x, label: '#elsewhere' },
      { ...comment, body: `${comment.body} (edited)` },
      { ...post, title: `${post.title} (edited)` },
      { ...comment, username: `${comment.username}_2` },
      { ...comment, communityName: `${comment.communityName}_2` },
      { ...comment, parentId: 't3_elsewhere' },
    ];
    for (const copy of changed)
      expect(copyKey(copy)).not.toBe(
        copyKey(copy.source === 'X' ? x : copy.dataType === 'post' ? post : comment),
      );
  });

  it('reads a subreddit alike whatever its case, as the item store does', () => {
    const comment = redditItems.find((item) => item.dataType === 'comment')!;
    const shouted = { ...comment, communityName: comment.communityName.toUpperCase() };
    expect(copyKey(shouted)).toBe(copyKey(comment));
  });

  it('merges one post sent under differently spelled uris as one corroborated item', () => {
    const post = {
      ...xPosts[0],
      uri: 'https://x.com/a/status/123',
      tweet: { ...xPosts[0].tweet, id: '123' },
    };
    post.user = { ...post.user, username: 'a' };
    const spellings = [
      'https://x.com/a/status/123',
      'https://x.com/A/status/123',
      'https://twitter.com/a/status/123?s=20',
    ];
    const answers = spellings.map((uri, index) =>
      checkAnswer(minerOf(index + 1), [toWireEntity({ ...post, uri })], everyXPost, 'x', NO_LIMIT),
    );

    const merged = mergeAnswers(answers, 10);

    expect(answers.map((answer) => answer.dropped)).toEqual([0, 0, 0]);
    expect(uris(merged.items)).toEqual(['https://x.com/a/status/123']);
    expect(merged.consensus).toBe(1);
    expect(credibilityScore(answers[2], merged.holders)).toBe(1);
  });

  it('merges a Reddit post whose id two miners spell with and without its kind as one corroborated item', () => {
    const post = redditItems.find((item) => item.dataType === 'post')!;
    const bare = { ...post, id: post.id.replace(/^t3_/, '') };
    const matcher = compileQuery({ source: 'REDDIT' });
    const answers = [post, bare].map((item, index) =>
      checkAnswer(minerOf(index + 1), [toWireEntity(item)], matcher, 'reddit', NO_LIMIT),
    );

    const merged = mergeAnswers(answers, 10);

    expect(answers.map((answer) => answer.dropped)).toEqual([0, 0]);
    expect(uris(merged.items)).toEqual([post.uri]);
    expect(merged.consensus).toBe(1);
    expect(credibilityScore(answers[1], merged.holders)).toBe(1);
  });

  // Two hotkeys of one operator sending the same invented posts won the limit cut and were
  // reported as corroborated, consensus 1 (an audit's finding).
  it('counts the holders of a copy by coldkey: two miners of one operator are one holder', () => {
    const invented = [
      postAt(10, '2024-05-21T10:00:00.000Z'),
      postAt(11, '2024-05-21T11:00:00.000Z'),
    ];
    const operator = [answerOf(1, invented, 0, 'op'), answerOf(2, invented, 0, 'op')];
    const honest = [answerOf(3, [a, b]), answerOf(4, [a, b])];

    const merged = mergeAnswers([...operator, ...honest], 2);

    expect(merged.holders.get(copyKey(invented[0]))).toBe(1);
    expect(merged.holders.get(copyKey(a))).toBe(2);
    expect(uris(merged.items)).toEqual(uris([b, a]));
    expect(mergeAnswers(operator, 10).consensus).toBe(0);
    expect(credibilityScore(operator[0], merged.holders)).toBe(0.5);
    expect(credibilityScore(honest[0], merged.holders)).toBe(1);
  });

  it('orders the result newest first whatever order the answers came in', () => {
    const merged = mergeAnswers([answerOf(1, [a, c]), answerOf(2, [d, b])], 10);

    expect(uris(merged.items)).toEqual(uris([d, c, b, a]));
  });

  it('keeps the items held by more miners when the limit cuts, even when others are newer', () => {
    const answers = [
      answerOf(1, [a, d]),
      answerOf(2, [a, b]),
      answerOf(3, [a, b]),
      answerOf(4, [c]),
    ];

    const merged = mergeAnswers(answers, 2);

    expect(uris(merged.items)).toEqual(uris([b, a]));
  });

  it('keeps the newest items when the limit cuts and newestFirst asks so, however held', () => {
    const answers = [answerOf(1, [a, b, d]), answerOf(2, [a, b]), answerOf(3, [c])];

    expect(uris(mergeAnswers(answers, 2).items)).toEqual(uris([b, a]));
    expect(uris(mergeAnswers(answers, 2, true).items)).toEqual(uris([d, c]));
  });

  it('keeps the newer items when the limit cuts among equally held ones', () => {
    const merged = mergeAnswers([answerOf(1, [a, b, c]), answerOf(2, [d])], 2);

    expect(uris(merged.items)).toEqual(uris([d, c]));
  });

  it('reports the share of returned items held by at least two miners as consensus', () => {
    const merged = mergeAnswers([answerOf(1, [a, b]), answerOf(2, [a, c])], 10);

    expect(merged.consensus).toBe(0.3333);
  });

  it('computes consensus over what the limit kept, not over everything received', () => {
    const merged = mergeAnswers([answerOf(1, [a, b, d]), answerOf(2, [a, c])], 1);

    expect(uris(merged.items)).toEqual([a.uri]);
    expect(merged.consensus).toBe(1);
  });

  it('returns nothing with zero consensus when no answer holds an item', () => {
    for (const answers of [[], [answerOf(1, []), answerOf(2, [], 3)]]) {
      const merged = mergeAnswers(answers, 10);
      expect(merged).toEqual({ items: [], holders: new Map(), consensus: 0 });
    }
  });
});

describe(credibilityScore.name, () => {
  const [a, b, c, d] = xPosts;

  it('scores a failed call 0', () => {
    expect(credibilityScore(undefined, new Map())).toBe(0);
  });

  it('says nothing about an empty answer when no other answer held a corroborated item', () => {
    expect(credibilityScore(answerOf(1, []), new Map())).toBeNull();
    const lone = mergeAnswers([answerOf(1, []), answerOf(2, [a, b])], 10).holders;
    expect(credibilityScore(answerOf(1, []), lone)).toBeNull();
  });

  // The subnet's validator penalises an empty answer in full once pooled data shows there was some.
  it('scores an empty answer 0 when other answers corroborated an item: the data existed', () => {
    const holders = mergeAnswers([answerOf(2, [a, b]), answerOf(3, [a])], 10).holders;
    expect(credibilityScore(answerOf(1, []), holders)).toBe(0);
  });

  it('scores all-valid items that nobody else held 0.5', () => {
    const answer = answerOf(1, [a, b]);
    expect(credibilityScore(answer, mergeAnswers([answer], 10).holders)).toBe(0.5);
  });

  it('scores all-valid items that other miners held too 1', () => {
    const answer = answerOf(1, [a, b]);
    const holders = mergeAnswers([answer, answerOf(2, [a, b, c])], 10).holders;

    expect(credibilityScore(answer, holders)).toBe(1);
  });

  it('scores in between when only some valid items were corroborated', () => {
    const answer = answerOf(1, [a, b, c, d]);
    const holders = mergeAnswers([answer, answerOf(2, [a])], 10).holders;

    expect(credibilityScore(answer, holders)).toBeCloseTo(0.625);
  });

  it('drops in proportion to the items that had to be dropped', () => {
    const halfDropped = answerOf(1, [a, b], 2);
    const quarterKept = answerOf(1, [a], 3);
    const corroborating = answerOf(2, [a, b]);
    const holders = mergeAnswers([halfDropped, corroborating], 10).holders;

    expect(credibilityScore(halfDropped, new Map())).toBeCloseTo(0.25);
    expect(credibilityScore(halfDropped, holders)).toBeCloseTo(0.5);
    expect(credibilityScore(quarterKept, holders)).toBeCloseTo(0.25);
  });

  it('scores an answer whose every item was dropped 0', () => {
    expect(credibilityScore(answerOf(1, [], 5), new Map())).toBe(0);
  });
});
