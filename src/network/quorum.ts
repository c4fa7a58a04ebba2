import { CheckedAnswer, isMostlyDropped, isUsableAnswer } from './answer-checks';
import { failureReasonOf, freesItsPlace } from './transport/miner-failures';
import { MinerFailureReason } from './query-failures';

export interface QuorumPlan<M extends { uid: number }> {
  /** Ranked: the first `fanout` are asked at once, the rest are spares in order. */
  candidates: readonly M[];
  fanout: number;
  quorum: number;
  deadlineMs: number;
  /** A chosen miner still silent after this long gets a spare asked in its place too. */
  hedgeAfterMs: number;
}

export interface QuorumOutcome {
  answers: CheckedAnswer[];
  failures: Map<number, MinerFailureReason>;
  /** Asked but still silent when the outcome was returned (their results come through onLate). */
  unanswered: number[];
  queried: number[];
  hedged: number;
  deadlineReached: boolean;
}

/** What arrives after the outcome was returned: still useful for credibility. */
export type LateResult =
  { uid: number; answer: CheckedAnswer } | { uid: number; failure: MinerFailureReason };

/**
 * Asks miners concurrently and resolves as soon as `quorum` usable answers are in (empty ones are
 * not: isUsableAnswer), or every asked miner has settled, or at the deadline with whatever
 * arrived; nothing waits for a hung miner. A failed miner or a mostly dropped answer is replaced
 * by a spare at once; one still silent after `hedgeAfterMs` gets a spare asked alongside it.
 * Spares are capped at `fanout`, not counting those that replace a call refused unsent for a
 * reason of that miner alone (freesItsPlace: its circuit, our concurrency cap to it, its budget,
 * its address): such a call spent no budget, which the cap bounds, and used no place in the
 * fan-out (docs/decisions.md, "Spares"). An empty answer gets none: nothing may match the
 * query, and a spare for each empty answer would double the calls of every such query.
 */
export function runQuorum<M extends { uid: number }>(
  plan: QuorumPlan<M>,
  ask: (miner: M) => Promise<CheckedAnswer>,
  onLate: (result: LateResult) => void = () => undefined,
): Promise<QuorumOutcome> {
  return new Promise((resolve) => {
    const answers: CheckedAnswer[] = [];
    const failures = new Map<number, MinerFailureReason>();
    const queried: number[] = [];
    const settled = new Set<number>();
    let nextSpare = Math.min(plan.fanout, plan.candidates.length);
    let lastSpare = Math.min(plan.candidates.length, nextSpare + plan.fanout);
    let usable = 0;
    let hedged = 0;
    let finished = false;

    const finish = (deadlineReached: boolean) => {
      if (finished) return;
      finished = true;
      clearTimeout(deadlineTimer);
      clearTimeout(hedgeTimer);
      const unanswered = queried.filter((uid) => !settled.has(uid));
      resolve({ answers, failures, unanswered, queried, hedged, deadlineReached });
    };
    const launchSpare = (): boolean => {
      if (nextSpare >= lastSpare) return false;
      launch(plan.candidates[nextSpare++]);
      return true;
    };
    const checkDone = () => {
      const pending = queried.length - settled.size;
      if (usable >= plan.quorum || pending === 0) finish(false);
    };
    const launch = (miner: M) => {
      queried.push(miner.uid);
      ask(miner).then(
        (answer) => {
          settled.add(miner.uid);
          if (finished) return onLate({ uid: miner.uid, answer });
          answers.push(answer);
          if (isUsableAnswer(answer)) usable++;
          else if (isMostlyDropped(answer)) launchSpare();
          checkDone();
        },
        (error: unknown) => {
          settled.add(miner.uid);
          const reason = failureReasonOf(error);
          if (finished) return onLate({ uid: miner.uid, failure: reason });
          failures.set(miner.uid, reason);
          if (freesItsPlace(error)) lastSpare = Math.min(plan.candidates.length, lastSpare + 1);
          launchSpare();
          checkDone();
        },
      );
    };

    const deadlineTimer = setTimeout(() => finish(true), plan.deadlineMs);
    const hedgeTimer = setTimeout(() => {
      for (const uid of queried.slice(0, plan.fanout)) {
        if (!settled.has(uid) && launchSpare()) hedged++;
      }
    }, plan.hedgeAfterMs);
    plan.candidates.slice(0, plan.fanout).forEach(launch);
    checkDone();
  });
}
