import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { StartupError } from '../common/lifecycle/startup-failure';

/**
 * Checks at start that DATA_DIR can hold datasets: a scraping task is compiled there when it
 * ends, seven days after its vote. A DATA_DIR that was a file, or not writable, was found only
 * then: every task failed at its end, for good, while health said healthy (an operator audit).
 */
export async function checkDataDirectory(dataDir: string): Promise<void> {
  const datasets = join(dataDir, 'datasets');
  const probe = join(datasets, `.write-check-${process.pid}`);
  try {
    await mkdir(datasets, { recursive: true });
    await writeFile(probe, '');
    await rm(probe);
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
    throw new StartupError(
      `Startup failed: DATA_DIR=${dataDir}: cannot write datasets under it (${reason})`,
    );
  }
}
