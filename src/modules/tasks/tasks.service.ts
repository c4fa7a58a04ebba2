import { ConflictException, Injectable, Logger, NotFoundException } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { Clock } from '../../common/clock/clock';
import { AppConfig } from '../../config/app-config';
import { InjectConfig } from '../../config/config.module';
import { Source } from '../../common/source';
import {
  isRunning,
  RegistrationConflict,
  TASK_LIFETIME_MS,
  TaskJob,
  TaskListFilter,
  TaskRow,
  TaskState,
} from './task.types';
import { quotedId, quotedStart } from './quoted-id';
import { TasksRepository } from './tasks.repository';
import { toTaskDto } from './task.mapper';
import { TaskDto, TaskListDto } from './dto/task.dto';

export interface Registration {
  /** Ids registered by this call (new tasks); ids already registered are unchanged. */
  registered: string[];
  conflicts: RegistrationConflict[];
  /**
   * Ids of the vote's tasks (new or already registered) whose post window begins after their
   * life ends: collected only while they run, their datasets can hold no post. Set when
   * registered.
   */
  windowAfterLife?: string[];
}

/**
 * What a vote's answer says of its tasks whose post window begins after their 7-day life
 * (Registration.windowAfterLife): '' when none.
 */
export function windowAfterLifeNote(ids: readonly string[]): string {
  if (ids.length === 0) return '';
  const named = ids.map(quotedId).join(', ');
  const which =
    ids.length === 1
      ? `window of task ${named} begins after its 7 days end`
      : `windows of tasks ${named} begin after their 7 days end`;
  return (
    `; the post ${which}: a task is collected only while it runs, so such a dataset holds ` +
    'no posts'
  );
}

/** The 409 of a recompile of a task that has not failed (documented on the operation). */
export function recompileRefused(id: string, state: TaskState): string {
  return `Task ${quotedId(id)} is ${state}; only a failed task can be recompiled`;
}

/** Scraping tasks: registration from votes, what task owners see of them, an admin's recompile. */
@Injectable()
export class TasksService {
  private readonly logger = new Logger(TasksService.name);

  constructor(
    private readonly repository: TasksRepository,
    private readonly clock: Clock,
    @InjectConfig() private readonly config: AppConfig,
  ) {}

  /** An active task not collected for this long is behind (one interval, one tick of slack). */
  lateAfterMs(): number {
    return this.config.tasks.collectIntervalMs + this.config.tasks.tickMs;
  }

  /**
   * Registers each job as a task active for seven days, inside the caller's transaction, which
   * holds the registration lock (see `registering`). A job whose id is already registered
   * keeps its original registration and lifetime if it describes the same task; a different
   * task under a known id, or a finished task's id, is a conflict; so is going over
   * `maxActive` active tasks for the hotkey. Nothing is registered when there is a conflict.
   * `now`: the caller's instant, when it has read tasks itself, so that both reads agree.
   * `found`: conflicts the caller found itself. They are answered with these, in the
   * submission's order, so that one answer names every job refused; the jobs they name are not
   * checked again.
   */
  async register(
    hotkey: string,
    jobs: readonly TaskJob[],
    maxActive: number,
    manager: EntityManager,
    now: Date = this.clock.now(),
    found: readonly RegistrationConflict[] = [],
  ): Promise<Registration> {
    const refused = new Set(found.map((conflict) => conflict.index));
    const checked = jobs.flatMap((job, index) => (refused.has(index) ? [] : [{ job, index }]));
    const ids = checked.map(({ job }) => job.id);
    const existing = new Map(
      (await this.repository.findByIds(ids, manager)).map((task) => [task.id, task]),
    );
    const conflicts: RegistrationConflict[] = [...found];
    checked.forEach(({ job, index }, position) => {
      const task = existing.get(job.id);
      // A legacy label's running generation may be the id given to another job.
      if (ids.indexOf(job.id) < position)
        conflicts.push({
          index,
          message: `task id ${quotedId(job.id)} is also given to another job of this submission`,
        });
      else if (task && !sameTask(task, job))
        conflicts.push({
          index,
          message: `task id ${quotedId(job.id)} is already registered for a different task`,
        });
      else if (task && !isRunning(task, now))
        conflicts.push({
          index,
          message: `task ${quotedId(job.id)} has ended (${endedAs(task)}); submit it under a new id to run it again`,
        });
    });
    if (conflicts.length > 0) return { registered: [], conflicts: conflicts.sort(bySubmission) };
    const fresh = jobs.filter((job) => !existing.has(job.id));
    const active = fresh.length > 0 ? await this.repository.countActiveBy(hotkey, now, manager) : 0;
    if (active + fresh.length > maxActive)
      return {
        registered: [],
        conflicts: [
          {
            index: null,
            message:
              `${fresh.length} new tasks would make ${active + fresh.length} active tasks for ` +
              `hotkey ${hotkey}; at most ${maxActive} may be active at once (DESIRABILITY_MAX_ACTIVE_TASKS)`,
          },
        ],
      };
    const expiresAt = new Date(now.getTime() + TASK_LIFETIME_MS);
    const registered = await this.repository.insertNew(fresh, hotkey, now, expiresAt, manager);
    // Registered all the same: the vote is the network's, where miners scrape such a window
    // when it comes (an audit's finding: the task then completed empty, said nowhere).
    const windowAfterLife = jobs
      .filter((job) => {
        const expires = existing.get(job.id)?.expires_at ?? expiresAt;
        return job.postStart !== null && job.postStart > expires;
      })
      .map((job) => job.id);
    return { registered, conflicts, windowAfterLife };
  }

  /**
   * The tasks registered for these labels alone (no keyword, no post window), inside the
   * caller's transaction, locked against the compiler's claim until it ends: where a legacy
   * label's generations are found.
   */
  findLabelTasks(
    labels: readonly { platform: Source; label: string }[],
    manager: EntityManager,
  ): Promise<TaskRow[]> {
    return this.repository.findLabelTasks(labels, manager);
  }

  /** Which of these ids are registered, inside the caller's transaction. */
  async findIds(ids: readonly string[], manager: EntityManager): Promise<string[]> {
    if (ids.length === 0) return [];
    return (await this.repository.findByIds(ids, manager)).map((task) => task.id);
  }

  /**
   * Gives tasks their weights, inside the caller's transaction: what collection goes by,
   * heaviest first. The caller gives each the weight the current votes give it (see
   * DesirabilityService.reweigh).
   */
  setWeights(
    weights: readonly { id: string; weight: number }[],
    manager: EntityManager,
  ): Promise<void> {
    return this.repository.setWeights(weights, manager);
  }

  /**
   * Records, inside the caller's transaction, the block a vote naming these tasks was committed in.
   */
  recordNetworkRegistration(
    ids: readonly string[],
    registration: { block: number; at: Date; commitSha: string },
    manager: EntityManager,
  ): Promise<void> {
    return this.repository.recordNetworkRegistration(ids, registration, manager);
  }

  /**
   * Tasks registered by a commitment whose commit the Gravity repository no longer has: their
   * `network_registration` named a commit no fresh reader can check out (a review's finding);
   * the vote's next commitment registers them again.
   */
  forgetNetworkRegistration(commitSha: string): Promise<void> {
    return this.repository.forgetNetworkRegistration(commitSha);
  }

  /** Runs `work` in a transaction holding the registration lock (one registration at a time). */
  registering<T>(work: (manager: EntityManager) => Promise<T>): Promise<T> {
    return this.repository.transaction(async (manager) => {
      await this.repository.lockRegistrations(manager);
      return work(manager);
    });
  }

  /** Ids of the tasks that are active now: only those weigh in the aggregate. */
  async activeTaskIds(): Promise<Set<string>> {
    return new Set((await this.repository.activeIds(this.clock.now())).map((row) => row.id));
  }

  /**
   * Which of these tasks have ended now (inside the caller's transaction, if given): what a
   * published vote leaves out, as the aggregate does (activeTaskIds).
   */
  async endedTaskIds(ids: readonly string[], manager?: EntityManager): Promise<Set<string>> {
    if (ids.length === 0) return new Set();
    return new Set(await this.repository.endedAmong(ids, this.clock.now(), manager));
  }

  /** One page of the tasks the filter selects, and how many it selects in all. */
  async list(
    filter: TaskListFilter,
    limit: number,
    offset: number,
  ): Promise<{ page: TaskListDto; total: number }> {
    const now = this.clock.now();
    const [tasks, total] = await this.repository.list(filter, limit, offset);
    return {
      page: { tasks: tasks.map((task) => toTaskDto(task, now, this.lateAfterMs())) },
      total,
    };
  }

  async get(id: string): Promise<TaskDto> {
    return toTaskDto(await this.find(id), this.clock.now(), this.lateAfterMs());
  }

  /**
   * Sends a failed task back to `compiling` (the master key's call), so the lifecycle pass's next
   * compile writes its dataset from the items it kept (a failed task's are never pruned); 404
   * for an unknown id, 409 for a task in another state.
   */
  async recompile(id: string): Promise<TaskDto> {
    for (;;) {
      const task = id.includes('\u0000') ? undefined : await this.repository.recompileFailed(id);
      if (task) {
        this.logger.log(
          { task_id: task.id },
          `task ${task.id}: sent back to compiling by the master key (recompile)`,
        );
        return toTaskDto(task, this.clock.now(), this.lateAfterMs());
      }
      const current = await this.find(id);
      // `failed` only if its compile failed again between the two statements (a recompile by
      // another call, then a failed compile): it is failed now, so it may go back again.
      if (current.state !== 'failed')
        throw new ConflictException(recompileRefused(current.id, current.state));
    }
  }

  async find(id: string): Promise<TaskRow> {
    // Postgres text cannot hold U+0000, so no task has such an id (and asking would be a 500).
    const task = id.includes('\u0000') ? undefined : await this.repository.findById(id);
    // A long id is quoted by its first 40 characters (ids in paths are not length-checked),
    // cut between code points: half a surrogate pair is JSON that strict parsers refuse. Its
    // control characters are quoted as escapes (`%00` as `\u0000`), not as themselves.
    if (!task) throw new NotFoundException(`Task ${quotedStart(id, 40)} not found`);
    return task;
  }
}

function sameTask(task: TaskRow, job: TaskJob): boolean {
  return (
    task.platform === job.platform &&
    task.label === job.label &&
    task.keyword === job.keyword &&
    (task.post_start?.getTime() ?? null) === (job.postStart?.getTime() ?? null) &&
    (task.post_end?.getTime() ?? null) === (job.postEnd?.getTime() ?? null)
  );
}

/** The submission as a whole first, then its jobs in order: the order of a 422's items. */
function bySubmission(a: RegistrationConflict, b: RegistrationConflict): number {
  return (a.index ?? -1) - (b.index ?? -1);
}

/**
 * How an ended task ended, for its 422. One that expired keeps `active` until the lifecycle's
 * next pass (up to TASK_COLLECT_INTERVAL) moves it to `compiling`: "has ended (active)" read as
 * a contradiction (an accelerated-time audit); its expiry is what ended it.
 */
function endedAs(task: TaskRow): string {
  return task.state === 'active' ? `expired at ${task.expires_at.toISOString()}` : task.state;
}
