import type { TaskDto } from './task.dto';

/*
 * Whole tasks for the document: assembled from the fields' own examples, Swagger UI showed an
 * `active` task beside a compiled dataset and a `failure_reason` of "string" (a Swagger UI
 * audit), as it had query_bucket's success beside an error's message.
 */

type Registered = Pick<
  TaskDto,
  'id' | 'params' | 'registered_by' | 'registered_at' | 'network_registration' | 'expires_at'
>;

const REGISTERED: Registered = {
  id: 'tao-x',
  params: {
    platform: 'x',
    label: '#tao',
    keyword: null,
    post_start_datetime: null,
    post_end_datetime: null,
  },
  registered_by: '5F4tQyWrhfGVcNhoqeiNsR6KjD4wMZ2kfhLj4oHYuyHbZAc3',
  registered_at: '2026-11-24T12:00:00.000Z',
  network_registration: {
    block: 6852691,
    registered_at: '2026-11-24T12:05:00.000Z',
    commit_sha: '3f786850e387550fdab836ed7e6dc881de23001b',
  },
  expires_at: '2026-12-01T12:00:00.000Z',
};

/** A task in the key order the service answers it in (task.mapper.ts). */
function task(
  state: TaskDto['state'],
  rest: Pick<TaskDto, 'progress' | 'completed_at' | 'dataset' | 'failure_reason'>,
  registered: Registered = REGISTERED,
): TaskDto {
  const { id, params, registered_by, registered_at, network_registration, expires_at } = registered;
  return {
    id,
    state,
    params,
    registered_by,
    registered_at,
    ...(network_registration ? { network_registration } : {}),
    expires_at,
    progress: rest.progress,
    completed_at: rest.completed_at,
    ...(rest.dataset ? { dataset: rest.dataset } : {}),
    ...(rest.failure_reason ? { failure_reason: rest.failure_reason } : {}),
  };
}

const COLLECTED = {
  items_collected: 1250,
  collections: 170,
  last_collected_at: '2026-12-01T12:04:31.000Z',
  lifetime_elapsed: 1,
  collection_behind: false,
};

const ACTIVE: TaskDto = task('active', {
  progress: {
    items_collected: 610,
    collections: 84,
    last_collected_at: '2026-11-27T23:10:12.000Z',
    lifetime_elapsed: 0.5,
    collection_behind: false,
  },
  completed_at: null,
});

const COMPLETED: TaskDto = task('completed', {
  progress: COLLECTED,
  completed_at: '2026-12-01T12:06:02.000Z',
  dataset: {
    content_type: 'application/gzip',
    rows: 1250,
    bytes: 482113,
    sha256: 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
    data_start: '2026-11-24T12:00:41.000Z',
    data_end: '2026-12-01T11:58:02.000Z',
    download_url: '/api/v1/tasks/tao-x/dataset',
    gap: null,
    parquet: {
      content_type: 'application/vnd.apache.parquet',
      bytes: 391204,
      sha256: '9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08',
      download_url: '/api/v1/tasks/tao-x/dataset?format=parquet',
    },
  },
});

const FAILURE = 'ENOSPC: no space left on device, write';

const FAILED: TaskDto = task('failed', {
  progress: COLLECTED,
  completed_at: null,
  failure_reason: FAILURE,
});

/** getTask's answers, by the task's state. */
export const TASK_EXAMPLES = {
  completed: { summary: 'Completed: its dataset written', value: COMPLETED },
  active: { summary: 'Active: still collecting', value: ACTIVE },
  failed: { summary: 'Failed: its compiles failed, its items kept', value: FAILED },
};

/** recompileTask's answer: the failed task, sent back to compiling, still saying why it failed. */
export const RECOMPILED_TASK_EXAMPLES = {
  recompiled: {
    summary: 'Sent back to compiling, still saying why it failed',
    value: task('compiling', { progress: COLLECTED, completed_at: null, failure_reason: FAILURE }),
  },
};

/** listTasks' answer: one page, newest first. */
export const TASK_LIST_EXAMPLES = {
  page: {
    summary: 'One page, newest first',
    value: {
      tasks: [
        task(
          'active',
          {
            // Read at 2026-12-01T13:00, after tao-x completed.
            progress: {
              items_collected: 402,
              collections: 100,
              last_collected_at: '2026-12-01T12:40:03.000Z',
              lifetime_elapsed: 0.6,
              collection_behind: false,
            },
            completed_at: null,
          },
          {
            ...REGISTERED,
            id: 'bittensor-reddit',
            params: { ...REGISTERED.params, platform: 'reddit', label: 'r/bittensor_' },
            registered_at: '2026-11-27T09:00:00.000Z',
            network_registration: undefined, // not published yet
            expires_at: '2026-12-04T09:00:00.000Z',
          },
        ),
        COMPLETED,
      ],
    },
  },
};
