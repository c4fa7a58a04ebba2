import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';

/**
 * Postgres's time, moved by `$n` milliseconds (the process clock's shift from the machine's: 0
 * outside tests). Every replica reads the one database clock, so their stamps agree whatever
 * their own clocks say; `clock_timestamp()` is the time of the statement, not of the transaction.
 */
const DATABASE_NOW = (shift: string) =>
  `(clock_timestamp() + make_interval(secs => ${shift}::float8 / 1000.0))`;

/** The calls made to each miner per synapse, kept in Postgres so every replica counts them. */
@Injectable()
export class CallBudgetRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** The database's time now, moved by `shiftMs`: the time every replica counts calls in. */
  async now(shiftMs: number): Promise<Date> {
    const [row] = await this.dataSource.query<{ now: Date }[]>(
      `SELECT ${DATABASE_NOW('$1')} AS now`,
      [shiftMs],
    );
    return row.now;
  }

  /**
   * Records a call now (the database's time, read once the row is locked) unless `limit` calls
   * already fall within the window ending now. One transaction holding the (miner, synapse)
   * row's lock, so concurrent replicas never both take the last call. Returns whether it was
   * recorded and the calls now inside the window.
   */
  reserve(
    hotkey: string,
    synapse: string,
    shiftMs: number,
    limit: number,
    windowMs: number,
  ): Promise<{ granted: boolean; calls: Date[] }> {
    return this.dataSource.transaction(async (manager) => {
      await manager.query(
        `INSERT INTO miner_call_budgets (miner_hotkey, synapse, calls) VALUES ($1, $2, '{}')
         ON CONFLICT DO NOTHING`,
        [hotkey, synapse],
      );
      const [row] = await manager.query<{ calls: Date[] }[]>(
        'SELECT calls FROM miner_call_budgets WHERE miner_hotkey = $1 AND synapse = $2 FOR UPDATE',
        [hotkey, synapse],
      );
      const [{ at }] = await manager.query<{ at: Date }[]>(`SELECT ${DATABASE_NOW('$1')} AS at`, [
        shiftMs,
      ]);
      const calls = row.calls.filter((call) => call.getTime() > at.getTime() - windowMs);
      const granted = calls.length < limit;
      if (granted) calls.push(at);
      await manager.query(
        'UPDATE miner_call_budgets SET calls = $3 WHERE miner_hotkey = $1 AND synapse = $2',
        [hotkey, synapse, calls],
      );
      return { granted, calls };
    });
  }

  /**
   * Counts `limit` calls at `at`, replacing those counted before: the window is full until `at`
   * plus the window. Never moves a fuller window's end earlier (a later call or fill stays).
   */
  async fill(hotkey: string, synapse: string, at: Date, limit: number): Promise<void> {
    await this.dataSource.query(
      `INSERT INTO miner_call_budgets AS budget (miner_hotkey, synapse, calls)
       VALUES ($1, $2, array_fill($3::timestamptz, ARRAY[$4::int]))
       ON CONFLICT (miner_hotkey, synapse) DO UPDATE SET calls = array_fill(
         GREATEST($3::timestamptz, (SELECT max(c) FROM unnest(budget.calls) AS c)), ARRAY[$4::int])`,
      [hotkey, synapse, at, limit],
    );
  }

  /**
   * The calls to each miner within the window ending now (the database's time moved by
   * `shiftMs`), oldest first; miners never called are absent.
   */
  async recentCalls(
    hotkeys: readonly string[],
    synapse: string,
    shiftMs: number,
    windowMs: number,
  ): Promise<Map<string, Date[]>> {
    const rows = await this.dataSource.query<{ hotkey: string; calls: Date[] }[]>(
      `WITH now AS (SELECT ${DATABASE_NOW('$3')} AS at)
       SELECT miner_hotkey AS hotkey,
              array(SELECT c FROM unnest(calls) AS c, now
                    WHERE c > now.at - make_interval(secs => $4 / 1000.0) ORDER BY c) AS calls
       FROM miner_call_budgets WHERE synapse = $2 AND miner_hotkey = ANY($1::varchar[])`,
      [hotkeys, synapse, shiftMs, windowMs],
    );
    return new Map(rows.map((row) => [row.hotkey, row.calls]));
  }
}
