import { plural } from '../../common/plural';
import { toSourceName } from '../../network/sources';
import { ERASURE_LOCK_TIMEOUT_MS } from '../tasks/dataset-erasure';
import { ErasureReport } from './author-erasure';

/**
 * Whether the erasure left something for the operator to look at: a dataset or a copy it could
 * not check (not as recorded, unreadable, changed while it was rewritten).
 */
function erasureIncomplete(report: ErasureReport): boolean {
  return (
    report.writersAwaited === false ||
    [...report.datasets, ...report.setAside, report.cachedAnswers].some(
      (place) => place?.outcome === 'not-checked',
    )
  );
}

/** Whether DATA_DIR/datasets does not exist: every dataset is then missing (a runbook audit). */
function noDatasetsFolder(report: ErasureReport): boolean {
  return report.setAside.some((place) => place.outcome === 'no-folder');
}

/**
 * The command's exit status: 1 when a place was not checked, 3 when a task of the source was
 * compiling as it ran (its compile may have read the author's items before they were deleted,
 * and record them in its dataset after the run: a runbook that reads `$?` must not file the
 * erasure as done; a review), 0 when it is all done.
 */
export function erasureStatus(report: ErasureReport): number {
  if (erasureIncomplete(report)) return 1;
  return report.compiling.length > 0 ? 3 : 0;
}

/**
 * The erasure's summary for the operator, one line each: what was taken out where (counts),
 * which datasets were rewritten (task ids), what was not checked and why, and what is left to
 * do. It names files and tasks, never a post: the output ends up in terminals and tickets.
 */
export function describeErasure(report: ErasureReport): string[] {
  const { author, dryRun } = report;
  const verb = dryRun ? 'would be removed' : 'removed';
  const source = toSourceName(author.source);
  const taskItems = [...report.taskItems.values()].reduce((sum, items) => sum + items, 0);
  const rewritten = report.datasets.flatMap((dataset) =>
    dataset.outcome === 'rewritten' || dataset.outcome === 'to-rewrite' ? [dataset] : [],
  );
  const rowsOut = rewritten.reduce((sum, dataset) => sum + dataset.removed, 0);
  const untouched = report.datasets.filter((dataset) => dataset.outcome === 'untouched').length;
  const copies = report.setAside.flatMap((copy) =>
    copy.outcome === 'removed' || copy.outcome === 'to-remove' ? [copy] : [],
  );
  const lines = [
    `${dryRun ? 'Dry run (nothing changed): erasure' : 'Erasure'} of ${source} author "${author.username}", datasets under ${report.dataDir}/datasets`,
    registerLine(report),
    `stored_items: ${plural(report.storedItems, 'row')} ${verb}`,
    `task_items: ${plural(taskItems, 'row')} ${verb}` +
      (report.taskItems.size > 0
        ? ` (tasks: ${[...report.taskItems.keys()].sort().join(', ')})`
        : ''),
    `datasets: ${rewritten.length} ${dryRun ? 'would be rewritten' : 'rewritten'}, ${plural(rowsOut, 'row')} ${verb}` +
      (rewritten.length > 0
        ? ` (tasks: ${rewritten.map((dataset) => `${dataset.taskId} -${dataset.removed}`).join(', ')}); ` +
          `their Parquet files ${verb}, made again from the new rows at the next Parquet download`
        : '') +
      `; ${plural(untouched, `${source} dataset`)} holding none of the author's rows (left as they are)`,
    noDatasetsFolder(report)
      ? `set-aside copies (….replaced-*): not checked: ${report.dataDir}/datasets does not exist (is DATA_DIR the service's?)`
      : `set-aside copies (….replaced-*): ${copies.length} holding the author's rows ${verb}, with their manifest and Parquet copies` +
        (copies.length > 0 ? ` (${copies.flatMap((copy) => copy.files).join(', ')})` : ''),
    ...cachedAnswersLine(report),
  ];
  for (const dataset of report.datasets)
    if (dataset.earlierRun !== undefined)
      lines.push(
        `FINISHED AN EARLIER RUN: the dataset of task ${dataset.taskId}: its rewrite's record was lost ` +
          (dataset.earlierRun === 'finished' ? '(recorded now)' : '(would be recorded)'),
      );
  if (report.writersAwaited === false)
    lines.push(
      'NOT CHECKED: stored_items and task_items: a collection or fetch writing as the author was ' +
        `registered was still writing ${ERASURE_LOCK_TIMEOUT_MS / 1000} s later, and may store some of their posts after the ` +
        'deletes: run the command again',
    );
  for (const dataset of report.datasets)
    if (dataset.outcome === 'not-checked')
      lines.push(`NOT CHECKED: the dataset of task ${dataset.taskId}: ${dataset.why}`);
  for (const copy of report.setAside)
    if (copy.outcome === 'not-checked') lines.push(`NOT CHECKED: ${copy.file}: ${copy.why}`);
  if (report.cachedAnswers?.outcome === 'not-checked')
    lines.push(`NOT CHECKED: the on-demand answers cached in Redis: ${report.cachedAnswers.why}`);
  return [...lines, ...stillToDo(report)];
}

/**
 * The cached on-demand answers: all of those in Redis removed (a cache key is a hash of the
 * query: which hold the author's posts cannot be told), or none reachable (each replica's memory).
 */
function cachedAnswersLine(report: ErasureReport): string[] {
  const cached = report.cachedAnswers;
  if (cached?.outcome === 'redis')
    return [
      `cached on-demand answers (Redis): ${plural(cached.entries, 'key')} ` +
        `${report.dryRun ? 'would be removed' : 'removed'} (all of them: a cached answer does not say whose posts it holds)`,
    ];
  if (cached?.outcome === 'process')
    return [
      "cached on-demand answers: in each replica's memory (no REDIS_URL), out of this command's reach",
    ];
  return [];
}

/** What the erased-authors register holds of the author. */
function registerLine({ register, dryRun }: ErasureReport): string {
  const keptOut =
    'kept out of the item store, task collections, on-demand answers and query_bucket from now on';
  if (register === null) return `erased_authors: would be registered (${keptOut})`;
  const since = register.erasedAt.toISOString();
  return register.added
    ? `erased_authors: registered at ${since}: ${keptOut}`
    : `erased_authors: registered already (since ${since})${dryRun ? '' : `: ${keptOut}`}`;
}

/** What the operator still has to do: the places no command of this service reaches. */
function stillToDo(report: ErasureReport): string[] {
  const lines = ['Still to do:'];
  if (report.dryRun) lines.push('- run it without --dry-run to remove them');
  if (noDatasetsFolder(report) && report.datasets.length > 0)
    lines.push(
      `- is DATA_DIR the service's? ${report.dataDir}/datasets does not exist, so every dataset ` +
        "is missing: run the command with the service's DATA_DIR (its .env, from its directory)",
    );
  if (erasureIncomplete(report))
    lines.push(
      '- look at what was NOT CHECKED (each line says why): a file not as its task records it is ' +
        'not served (503) and may hold the rows; one busy, changed or failed as it was ' +
        'rewritten: run the command again (a rewrite whose record was lost answers 503 until ' +
        'the next run finishes it)',
    );
  if (report.compiling.length > 0)
    lines.push(
      `- tasks compiling as it ran (${report.compiling.join(', ')}): run the command again once ` +
        "they have completed, as their compile may have read the author's items before they " +
        'were deleted (exit status 3)',
    );
  lines.push(
    '- backups: every backup of the database or of DATA_DIR made before now still holds the ' +
      "posts and lacks the register's row, and a restore brings the posts back: keep your own " +
      'list of erased authors and run the command again for each after any restore',
    cachedAnswersToDo(report),
  );
  return lines;
}

/** What is left of the cached on-demand answers (QUERY_CACHE_TTL_SECONDS), and of clients' copies. */
function cachedAnswersToDo(report: ErasureReport): string {
  const clients = 'clients keep the datasets and answers they downloaded before';
  switch (report.cachedAnswers?.outcome) {
    case 'redis':
      return (
        '- answers a replica cached in its own memory while Redis was out of its reach (if ever) ' +
        `are not removed: restart that replica, or they expire after QUERY_CACHE_TTL_SECONDS; ${clients}`
      );
    case 'process':
      return (
        "- answers cached in each replica's memory may hold the posts: restart the replicas to " +
        `drop them, or they expire after QUERY_CACHE_TTL_SECONDS; ${clients}`
      );
    case 'not-checked':
      return `- cached answers in Redis: run the command again once Redis answers; ${clients}`;
    default:
      return `- answers already cached (QUERY_CACHE_TTL_SECONDS) expire on their own; ${clients}`;
  }
}
