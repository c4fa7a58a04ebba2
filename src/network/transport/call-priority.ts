import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * Whether the miner calls being made serve a scraping task's collection rather than a user's
 * query: task calls leave each miner's last calls to users (TASK_BUDGET_RESERVE, CallBudgets).
 * Marked around the collector's query instead of passed down as an argument because a
 * collection reaches miners by every path a user's query takes (the live fan-out with its
 * hedges, stored-data fetches), and only the budgets care. MinerClient.call reads the mark when
 * it is called, before its bulkhead, whose queue may run a call from another call's context.
 */
const taskCalls = new AsyncLocalStorage<true>();

/** Runs `work` with every miner call it makes counted as a task's. */
export function asTaskCalls<T>(work: () => Promise<T>): Promise<T> {
  return taskCalls.run(true, work);
}

export function isTaskCall(): boolean {
  return taskCalls.getStore() === true;
}
