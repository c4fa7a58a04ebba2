import { HttpException } from '@nestjs/common';

/**
 * An answer whose status is not the route's but whose body is the route's own report, not an
 * error: health's 503 is its report with `status: "unhealthy"`. AllExceptionsFilter sends the
 * body as it is. Thrown rather than set through `@Res()`: a parameter costs Nest's parameter
 * pipeline (five promises) on every call, and health is polled hard.
 */
export class ReportException extends HttpException {
  constructor(report: object, status: number) {
    super(report, status);
  }
}
