import { errorCase } from '../../common/errors/error-cases';

/** The documentation both task controllers (tasks, task-datasets) give their `:id` routes. */
export const TASK_ID = {
  name: 'id',
  description:
    'Task id (the job id of the vote that registered it). The example, `tao-x`, is the task ' +
    "set_desirabilities' example registers",
  // Without one, Swagger UI's try-it-out refused to send (a Swagger UI audit).
  example: 'tao-x',
};
export const TASK_NOT_FOUND = errorCase(
  404,
  'taskNotFound',
  'No task has this id',
  "Task 'tao-x' not found",
);
