import { createHash } from 'node:crypto';
import { Source } from '../../common/source';
import { withUnprintablesEscaped } from '../../common/validation/control-characters';
import { quotedId } from '../tasks/quoted-id';
import { isRunning, RegistrationConflict, TaskRow } from '../tasks/task.types';
import { WeightedJob } from './desirability.types';

/** Longest slug of a label in its ids: with the platform, generation and digest, 60 characters. */
const SLUG_LENGTH = 40;
const GENERATION_ID = /-g([1-9][0-9]{0,8})-[0-9a-f]{12}$/;

/**
 * The id of a legacy label's task: readable, within the id rules (at most 60 characters, no
 * slashes), and the same for the same platform and label in every submission. A label runs
 * again after its task has ended under the next generation's id
 * (`reddit-r-bitcoin-g2-<digest>`): an ended task's id stays its dataset's.
 */
export function legacyJobId(platform: Source, label: string, generation = 1): string {
  const suffix = generation > 1 ? `g${generation}` : '';
  const slug = label
    .replace(/[^a-z0-9_]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, suffix ? SLUG_LENGTH - suffix.length - 1 : SLUG_LENGTH)
    .replace(/-+$/, '');
  const digest = createHash('sha256').update(`${platform}\n${label}`).digest('hex').slice(0, 12);
  return [platform, slug, suffix, digest].filter((part) => part.length > 0).join('-');
}

/** The generation `id` is of the label's ids, or undefined when it is not one of them. */
export function legacyGeneration(id: string, platform: Source, label: string): number | undefined {
  if (id === legacyJobId(platform, label)) return 1;
  const match = GENERATION_ID.exec(id);
  if (!match) return undefined;
  const generation = Number(match[1]);
  return legacyJobId(platform, label, generation) === id ? generation : undefined;
}

/** A task registered for a label alone (no keyword, no post window), as legacy labels are. */
export type LabelTask = Pick<TaskRow, 'id' | 'platform' | 'label' | 'state' | 'expires_at'>;

/**
 * The submission's jobs with each legacy label under its current id: its latest generation's
 * while that task runs (the submission joins it), else the next generation whose id is not
 * `taken` (a new task). `tasks` are the registered tasks of the legacy labels alone; a task of
 * the label under an id of its own (a job submitted with one) is not one of its generations.
 * `taken`: ids known to be held by other tasks or given to other jobs of the submission, which
 * a label skips rather than be refused for an id it never chose.
 */
export function withCurrentLegacyIds(
  jobs: readonly WeightedJob[],
  tasks: readonly LabelTask[],
  now: Date,
  taken: ReadonlySet<string> = new Set(),
): WeightedJob[] {
  return jobs.map((job) => {
    if (!job.legacy || job.label === null) return job;
    const { platform, label } = job;
    let latest: { generation: number; task: LabelTask } | undefined;
    for (const task of tasks) {
      if (task.platform !== platform || task.label !== label) continue;
      const generation = legacyGeneration(task.id, platform, label);
      if (generation !== undefined && generation > (latest?.generation ?? 0))
        latest = { generation, task };
    }
    if (latest && isRunning(latest.task, now)) return { ...job, id: latest.task.id };
    let generation = (latest?.generation ?? 0) + 1;
    while (taken.has(legacyJobId(platform, label, generation))) generation += 1;
    return { ...job, id: legacyJobId(platform, label, generation) };
  });
}

/**
 * The jobs of a submission given the id a legacy label of it resolved to (withCurrentLegacyIds):
 * a conflict at each such job. A label joins its task while it runs, whatever ids the
 * submission gives, so the job given that task's id is the one refused (alone, it would be
 * refused as naming a task of other params); a label's new generation skips the given ids, so
 * never clashes. Found after resolution: a label's first generation's id, given to a job, is
 * no clash when the label resolves to another.
 */
export function legacyIdClashes(jobs: readonly WeightedJob[]): RegistrationConflict[] {
  const labels = new Map<string, WeightedJob>();
  for (const job of jobs) if (job.legacy && !labels.has(job.id)) labels.set(job.id, job);
  return jobs.flatMap((job, index) => {
    const label = job.legacy ? undefined : labels.get(job.id);
    if (!label) return [];
    // A label may hold any character (only ids must be printable): its control and format
    // characters are written as escapes, as an id's are (quoted-id.ts).
    const message =
      `id ${quotedId(job.id)} is already used by another job of this submission: the ` +
      `${label.platform} label '${withUnprintablesEscaped(label.label ?? '')}' of a legacy entry ` +
      'runs under it (a label joins its task while it runs)';
    return [{ index, message }];
  });
}
