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

/** Arbitrary constant: the advisory lock that serializes takes of a reserved synapse. */
export const NETWORK_RESERVE_LOCK_ID = 7_013_000_005;

/**
 * A share of the network that keeps its last call of a synapse: a call that would leave the
 * miner none is granted only while more than `keep` of the network have one. The network is
 * the miners of `askable` with an index (miners.index_buckets > 0): the spot checks pick only
 * those, so a miner without one (never synced, dropped, dead) always has its call left and
 * would otherwise fill the share alone. A miner without an index takes its last call freely.
 */
export interface NetworkReserve {
  /** The hotkeys of the miners that can be asked the synapse, the one taking among them. */
  askable: readonly string[];
  /** How many of a network of `size` miners with an index keep their call. */
  keep: (size: number) => number;
  /** The synapse's whole budget: a miner with that many calls in the window has none left. */
  budget: number;
}

export interface Reservation {
  granted: boolean;
  /** Refused only because the call was the miner's last and the reserve keeps it. */
  kept: boolean;
  /** When kept: the earliest time a miner of the network without a call has one again. */
  freeAt: Date | null;
  /** When granted, with a budget: the time the call was counted at (what `giveBack` removes). */
  at?: Date;
}

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
   * row's lock, so concurrent replicas never both take the last call. With a `reserve`, a call
   * that would be the miner's last is also refused while no more than `keep` miners of the
   * network have one: takes under a reserve hold one lock, so concurrent requests and replicas
   * never both count the same spare miner (uncontended: a user's or task's take of the
   * reserved synapse, a few a second at most). The network is counted in one query that
   * returns a count, not a row per miner. `lockNetwork` takes that lock without a reserve: the
   * spot checks' own takes, which must not slip between another take's count and its call.
   */
  reserve(
    hotkey: string,
    synapse: string,
    shiftMs: number,
    limit: number,
    windowMs: number,
    reserve?: NetworkReserve,
    lockNetwork = reserve !== undefined,
  ): Promise<Reservation> {
    return this.dataSource.transaction(async (manager) => {
      if (lockNetwork)
        await manager.query('SELECT pg_advisory_xact_lock($1)', [NETWORK_RESERVE_LOCK_ID]);
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
      const withinBudget = calls.length < limit;
      let kept = false;
      let freeAt: Date | null = null;
      if (withinBudget && reserve && calls.length + 1 >= reserve.budget) {
        const [network] = await manager.query<
          { size: number; taker: number; without: number; free_at: Date | null }[]
        >(
          `SELECT count(*)::int AS size,
                  count(*) FILTER (WHERE miner.hotkey = $6)::int AS taker,
                  count(*) FILTER (WHERE counted.calls >= $5)::int AS without,
                  min(counted.oldest) FILTER (WHERE counted.calls >= $5)
                    + make_interval(secs => $4 / 1000.0) AS free_at
           FROM miners AS miner
           LEFT JOIN (SELECT miner_hotkey, min(c) AS oldest, count(c) AS calls
                      FROM miner_call_budgets, unnest(calls) AS c
                      WHERE synapse = $2 AND miner_hotkey = ANY($1::varchar[])
                        AND c > $3::timestamptz - make_interval(secs => $4 / 1000.0)
                      GROUP BY miner_hotkey) AS counted ON counted.miner_hotkey = miner.hotkey
           WHERE miner.hotkey = ANY($1::varchar[]) AND miner.index_buckets > 0`,
          [reserve.askable, synapse, at, windowMs, reserve.budget, hotkey],
        );
        kept = network.taker > 0 && network.size - network.without <= reserve.keep(network.size);
        if (kept) freeAt = network.free_at;
      }
      const granted = withinBudget && !kept;
      if (granted) calls.push(at);
      await manager.query(
        'UPDATE miner_call_budgets SET calls = $3 WHERE miner_hotkey = $1 AND synapse = $2',
        [hotkey, synapse, calls],
      );
      return granted ? { granted, kept, freeAt, at } : { granted, kept, freeAt };
    });
  }

  /**
   * Removes one call counted at `at` (a reservation's): a call taken and then never sent. Stamps
   * are written as read back (milliseconds), so `at` matches its own; a 403's fill since then
   * replaced it, and the window stays full (no fill's call has a take's stamp: `fill`).
   */
  async giveBack(hotkey: string, synapse: string, at: Date): Promise<void> {
    await this.dataSource.query(
      `UPDATE miner_call_budgets
       SET calls = calls[:array_position(calls, $3::timestamptz) - 1]
                   || calls[array_position(calls, $3::timestamptz) + 1:]
       WHERE miner_hotkey = $1 AND synapse = $2 AND $3::timestamptz = ANY(calls)`,
      [hotkey, synapse, at],
    );
  }

  /**
   * Counts `limit` calls at `at`, replacing those counted before: the window is full until `at`
   * plus the window. Never moves a fuller window's end earlier (a later call or fill stays).
   * Dated after every call counted (a millisecond after the latest, when that is not before
   * `at`), read under the row's lock: a call taken before the fill, even one taken after the
   * caller read `at`, is then given back (`giveBack`) by a stamp no call of the fill has, so the
   * window stays full; a call taken after it is refused while the fill fills the window.
   */
  async fill(hotkey: string, synapse: string, at: Date, limit: number): Promise<void> {
    await this.dataSource.query(
      `INSERT INTO miner_call_budgets AS budget (miner_hotkey, synapse, calls)
       VALUES ($1, $2, array_fill($3::timestamptz, ARRAY[$4::int]))
       ON CONFLICT (miner_hotkey, synapse) DO UPDATE SET calls = array_fill(
         GREATEST($3::timestamptz,
                  (SELECT max(c) FROM unnest(budget.calls) AS c) + interval '1 millisecond'),
         ARRAY[$4::int])`,
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
