import fc from 'fast-check';

/**
 * Concurrent `set_desirabilities` against several replicas of the service, and the invariant
 * registration must keep whatever the interleaving: for every task id, the task's params are
 * the params every stored vote names it with, and the aggregate lists only those params. Checked
 * over HTTP only (the task, the stored vote, the aggregate), as a client would see it.
 */

interface Job {
  id: string;
  weight: number;
  params: { platform: 'x'; label: string };
}

export interface RaceRound {
  /** Submissions fired at once, each to replica `replica % urls.length`. */
  submissions: { replica: number; jobs: Job[] }[];
}

export interface RoundOutcome {
  submissions: number;
  accepted: number;
  refused: number;
  /** Every way the invariant was broken (empty when it held). */
  violations: string[];
}

/**
 * A round: 2–12 submissions of 1–3 jobs each, over a few ids shared by the round (so that
 * submissions race for the same new id), each with one of two labels of its own (so that they
 * conflict half of the time; a submission may not give two ids one label).
 */
export function raceRound(round: number): fc.Arbitrary<RaceRound> {
  const job = fc
    .record({
      letter: fc.constantFrom('a', 'b', 'c', 'd'),
      side: fc.constantFrom(0, 1),
      weight: fc.integer({ min: 1, max: 9 }),
    })
    .map(({ letter, side, weight }) => ({
      id: `race-${round}-${letter}`,
      weight,
      params: { platform: 'x' as const, label: `#side${side}${letter}` },
    }));
  return fc.record({
    submissions: fc.array(
      fc.record({
        replica: fc.nat(),
        jobs: fc.uniqueArray(job, { minLength: 1, maxLength: 3, selector: (j) => j.id }),
      }),
      { minLength: 2, maxLength: 12 },
    ),
  });
}

/**
 * Fires the round's submissions at once, then checks the invariant over HTTP, every request
 * through `send` (the e2e test passes one that checks each answer against the document).
 */
export async function runRaceRound(
  urls: readonly string[],
  masterKey: string,
  hotkey: string,
  round: RaceRound,
  send: (url: string, init?: RequestInit) => Promise<Response> = fetch,
): Promise<RoundOutcome> {
  const headers = { 'X-API-Key': masterKey, 'Content-Type': 'application/json' };
  const answers = await Promise.all(
    round.submissions.map(async ({ replica, jobs }) => {
      const response = await send(`${urls[replica % urls.length]}/api/v1/set_desirabilities`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ desirabilities: jobs }),
      });
      await response.arrayBuffer();
      return { status: response.status, jobs };
    }),
  );
  const violations: string[] = [];
  const get = async (path: string): Promise<unknown> => {
    const response = await send(`${urls[0]}${path}`, { headers });
    return response.status === 200 ? response.json() : undefined;
  };
  const ids = [...new Set(round.submissions.flatMap((s) => s.jobs.map((j) => j.id)))];
  const labels = new Map<string, string>();
  for (const id of ids) {
    const task = (await get(`/api/v1/tasks/${id}`)) as { params: { label: string } } | undefined;
    if (task) labels.set(id, task.params.label);
  }
  for (const { status, jobs } of answers) {
    if (status !== 200 && status !== 422) violations.push(`a submission answered ${status}`);
    if (status !== 200) continue;
    for (const job of jobs)
      if (labels.get(job.id) !== job.params.label)
        violations.push(
          `${job.id}: accepted with ${job.params.label}, registered with ${labels.get(job.id)}`,
        );
  }
  const vote = ((await get(`/api/v1/get_desirabilities?hotkey=${hotkey}`)) ?? []) as Job[];
  for (const job of vote)
    if (labels.has(job.id) && labels.get(job.id) !== job.params.label)
      violations.push(
        `${job.id}: stored vote says ${job.params.label}, task ${labels.get(job.id)}`,
      );
  const aggregate = ((await get('/api/v1/get_desirabilities?limit=1000')) ?? []) as Job[];
  for (const job of aggregate)
    if (labels.has(job.id) && labels.get(job.id) !== job.params.label)
      violations.push(`${job.id}: aggregate lists ${job.params.label}, task ${labels.get(job.id)}`);
  const accepted = answers.filter((answer) => answer.status === 200).length;
  return {
    submissions: answers.length,
    accepted,
    refused: answers.filter((answer) => answer.status === 422).length,
    violations,
  };
}
