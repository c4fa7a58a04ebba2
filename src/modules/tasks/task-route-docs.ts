import { errorCase } from '../../common/errors/error-cases';

/** The documentation both task controllers (tasks, task-datasets) give their `:id` routes. */
export const TASK_ID = {
  name: 'id',
  description: 'Task id (the job id of the vote that registered it)',
};
export const TASK_NOT_FOUND = errorCase(
  404,
  'taskNotFound',
  'No task has this id',
  "Task 'tao-x' not found",
);
