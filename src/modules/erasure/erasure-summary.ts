import { plural } from '../../common/plural';
import { toSourceName } from '../../network/sources';
import { ErasureReport } from './author-erasure';

/**
 * Whether the erasure left something for the operator to look at: a dataset or a copy it could
 * not check (not as recorded, unreadable, changed while it was rewritten).
 */
function erasureIncomplete(report: ErasureReport): boolean {
  return [...report.datasets, ...report.setAside].some((place) => place.outcome === 'not-checked');
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
  const copies = report.setAside.flatMap((copy) => (copy.outcome === 'not-checked' ? [] : [copy]));
  const lines = [
    `${dryRun ? 'Dry run (nothing changed): erasure' : 'Erasure'} of ${source} author "${author.username}", datasets under ${report.dataDir}/datasets`,
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
    `set-aside copies (….replaced-*): ${copies.length} holding the author's rows ${verb}, with their manifest and Parquet copies` +
      (copies.length > 0 ? ` (${copies.flatMap((copy) => copy.files).join(', ')})` : ''),
  ];
  for (const dataset of report.datasets)
    if (dataset.earlierRun !== undefined)
      lines.push(
        `FINISHED AN EARLIER RUN: the dataset of task ${dataset.taskId}: its rewrite's record was lost ` +
          (dataset.earlierRun === 'finished' ? '(recorded now)' : '(would be recorded)'),
      );
  for (const dataset of report.datasets)
    if (dataset.outcome === 'not-checked')
      lines.push(`NOT CHECKED: the dataset of task ${dataset.taskId}: ${dataset.why}`);
  for (const copy of report.setAside)
    if (copy.outcome === 'not-checked') lines.push(`NOT CHECKED: ${copy.file}: ${copy.why}`);
  return [...lines, ...stillToDo(report)];
}

/** What the operator still has to do: the places no command of this service reaches. */
function stillToDo(report: ErasureReport): string[] {
  const lines = ['Still to do:'];
  if (report.dryRun) lines.push('- run it without --dry-run to remove them');
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
      'posts, and a restore brings them back: run the command again after any restore',
    '- miners may still hold the posts and serve them again to an on-demand query or a task ' +
      'collection: run the command again later to take out what came back',
    '- answers already cached (QUERY_CACHE_TTL_SECONDS) expire on their own; clients keep the ' +
      'datasets and answers they downloaded before',
  );
  return lines;
}
