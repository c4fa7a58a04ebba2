import { applyDecorators } from '@nestjs/common';
import { Transform } from 'class-transformer';
import { Matches, Max } from 'class-validator';
import { MAX_TIMER_MS } from '../common/clock/durations';
import { HEADER_SECRET_FORM, MAX_PRESENTED_SECRET_LENGTH } from '../common/security/api-key-secret';
import { MaxCharacters } from '../common/validation/text-length';

// The forms and bounds several settings of the environment schema (environment-variables.ts)
// share: how a number is read, and the bounds that keep a value meaningful.

/**
 * A number setting is read only in decimal notation: an optional sign, digits and, for a decimal
 * setting, an optional fraction (`0.25`), no exponent. Read with `Number()`, `PORT=0x10` was port
 * 16, `NETUID=0b1101` subnet 13, `1e3` a thousand and `VALIDATOR_MIN_STAKE=0x10` 16, none of them
 * said. Any other text is NaN, which the setting's `IsInt` or `IsNumber` refuses. (loadConfig has
 * trimmed the white space at the ends.)
 */
const DECIMAL_INTEGER = /^[+-]?\d+$/;
const DECIMAL_FRACTION = /^[+-]?\d+(\.\d+)?$/;
const readIn = (form: RegExp) =>
  Transform(({ value }: { value: unknown }) =>
    // `+ 0` turns `-0` into 0.
    typeof value === 'string' ? (form.test(value) ? Number(value) + 0 : NaN) : value,
  );
export const toInt = () => readIn(DECIMAL_INTEGER);
export const toDecimal = () => readIn(DECIMAL_FRACTION);

/**
 * The bound of an integer setting without one of its own: past 2^53 digits name no one number
 * (RATE_LIMIT_REGULAR=100000000000000000000000 was a budget of 1e23).
 */
export const SafeInteger = () =>
  Max(Number.MAX_SAFE_INTEGER, {
    message: `must be at most ${Number.MAX_SAFE_INTEGER} (Number.MAX_SAFE_INTEGER)`,
  });

/** A secret clients send in a header (MASTER_KEY, METRICS_TOKEN): one they can send as it is. */
export const HeaderSecret = () =>
  applyDecorators(
    MaxCharacters(MAX_PRESENTED_SECRET_LENGTH, {
      message: `must be at most ${MAX_PRESENTED_SECRET_LENGTH} characters (longer is never looked up)`,
    }),
    Matches(HEADER_SECRET_FORM, {
      // The white space at its ends is trimmed (loadConfig), as a header's is.
      message: 'must be printable ASCII, as an HTTP header carries it',
    }),
  );

/**
 * The longest duration a setting may give (365 days), windows included. Far longer ones broke
 * what reads them: a rate-limit or failed-authentication window's count in Redis (its script
 * passes the window's milliseconds from about 1e17 on as `1e+17`, which Redis refuses as "not
 * an integer", so every count fell back to each process: a review's finding), and a Date or a
 * Postgres interval, breaking their job for good (TASK_COLLECT_INTERVAL=9007199254740991 failed
 * every lifecycle tick, "timestamp out of range"; PUBLICATION_LEASE_MS every publication,
 * "Invalid time value": a configuration audit's finding).
 */
export const MAX_DURATION_SECONDS = 365 * 24 * 3600;
export const DurationSeconds = () =>
  Max(MAX_DURATION_SECONDS, { message: `must be at most ${MAX_DURATION_SECONDS} s (365 days)` });
export const DurationMs = () =>
  Max(MAX_DURATION_SECONDS * 1000, {
    message: `must be at most ${MAX_DURATION_SECONDS * 1000} ms (365 days)`,
  });

/** Wallet and hotkey names are file names: no separators, not `.` or `..`. */
export const WALLET_NAME = /^(?!\.{1,2}$)[\w.-]{1,64}$/;

/** MAX_TIMER_MS in whole seconds, for the settings written in seconds. */
export const MAX_TIMER_SECONDS = Math.floor(MAX_TIMER_MS / 1000);

/** A delay that feeds a timer, in milliseconds (MAX_TIMER_MS). */
export const TimerMs = () =>
  Max(MAX_TIMER_MS, {
    message: `must be at most ${MAX_TIMER_MS} ms (about 24.8 days), the longest timer Node keeps`,
  });

/** A delay that feeds a timer, in seconds (MAX_TIMER_SECONDS). */
export const TimerSeconds = () =>
  Max(MAX_TIMER_SECONDS, {
    message: `must be at most ${MAX_TIMER_SECONDS} s (about 24.8 days), the longest timer Node keeps`,
  });
