import {
  DatasetErasure,
  DatasetErasureOutcome,
  ERASURE_LOCK_TIMEOUT_MS,
} from '../tasks/dataset-erasure';
import { eraseFromSetAside, SetAsideErasureOutcome } from '../tasks/set-aside-erasure';
import { AuthorItemsRepository, RegisteredAuthor, TaskItemCounts } from './author-items.repository';
import { CachedAnswersOutcome } from './cached-answers';
import { ErasedAuthor, isAuthorOf } from './erased-author';

/** What an erasure took out, or would take out (`dryRun`), and where. */
export interface ErasureReport {
  author: ErasedAuthor;
  dryRun: boolean;
  dataDir: string;
  /**
   * The author in the erased-authors register: registered by this run or an earlier one; for a
   * dry run, `added: false` when an earlier run did, null when none did.
   */
  register: RegisteredAuthor | null;
  /**
   * Whether the writers of the tables already under way as the author was registered had
   * finished before the deletes (AuthorItemsRepository.awaitWriters); false: one was still
   * writing after ERASURE_LOCK_TIMEOUT_MS, and may store the author's items after the deletes.
   * Null for a dry run.
   */
  writersAwaited: boolean | null;
  storedItems: number;
  /** The author's items in tasks not yet compiled or failed (and completed within the hour). */
  taskItems: TaskItemCounts;
  /** Every completed dataset of the author's source: rewritten, untouched or not checked. */
  datasets: DatasetErasureOutcome[];
  setAside: SetAsideErasureOutcome[];
  /**
   * Tasks of the author's source still compiling: a compile that read the author's items before
   * they were deleted (by this run or an earlier one) writes them into its dataset, after this
   * erasure looked at the datasets.
   */
  compiling: string[];
  /** The cached on-demand answers (eraseCachedAnswers), once the command has seen to them. */
  cachedAnswers?: CachedAnswersOutcome;
}

/**
 * An author's erasure (a GDPR-style request): the author in the erased-authors register, which
 * keeps them out of what is stored and answered from then on, then the author's posts out of
 * the item store, the tasks' collected items, every completed dataset and the copies set aside
 * beside them. The tables go first: a collection or a compile reads them, and a dataset
 * compiled after this reads no row of the author. Run by the operator's command
 * (erase-author-command.ts) beside the running service: every step holds what the service's
 * own writers hold.
 */
export class AuthorErasure {
  constructor(
    private readonly items: AuthorItemsRepository,
    private readonly datasets: DatasetErasure,
    private readonly dataDir: string,
    /** How long the writers under way as the author was registered are waited for. */
    private readonly lockTimeoutMs = ERASURE_LOCK_TIMEOUT_MS,
  ) {}

  /**
   * The author is registered first, committed before anything is deleted: an insert that begins
   * after it leaves the author out. The writers already under way are waited for (a barrier,
   * awaitWriters), so that what the deletes find is all there is (docs/decisions.md, "An
   * author's erasure").
   */
  async erase(author: ErasedAuthor, dryRun: boolean): Promise<ErasureReport> {
    const register = dryRun
      ? await this.items
          .registered(author)
          .then((erasedAt) => (erasedAt === null ? null : { erasedAt, added: false }))
      : await this.items.register(author);
    const writersAwaited = dryRun ? null : await this.items.awaitWriters(this.lockTimeoutMs);
    const storedItems = dryRun
      ? await this.items.countStored(author)
      : await this.items.deleteStored(author);
    const taskItems = dryRun
      ? await this.items.countInTasks(author)
      : await this.items.deleteInTasks(author);
    const isErased = isAuthorOf(author);
    const { datasets, compiling } = await this.datasets.eraseAll(author.source, isErased, dryRun);
    const setAside = await eraseFromSetAside(this.dataDir, isErased, dryRun);
    return {
      author,
      dryRun,
      dataDir: this.dataDir,
      register,
      writersAwaited,
      storedItems,
      taskItems,
      datasets,
      setAside,
      compiling,
    };
  }
}
