import type { ExecutionContext } from '@nestjs/common';
import type { Reflector } from '@nestjs/core';

/**
 * Metadata read so far, by controller, handler and metadata key. Decorators cannot change
 * after start-up, so a guard reads a route's metadata once, not on every request.
 */
const seen = new WeakMap<object, Map<object, Map<string, unknown>>>();

/** The route's metadata under `key`: the handler's, else its controller's. */
export function routeMetadata<T>(
  reflector: Reflector,
  context: ExecutionContext,
  key: string,
): T | undefined {
  const controller = context.getClass();
  const handler = context.getHandler();
  let handlers = seen.get(controller);
  if (!handlers) {
    handlers = new Map();
    seen.set(controller, handlers);
  }
  let values = handlers.get(handler);
  if (!values) {
    values = new Map();
    handlers.set(handler, values);
  }
  if (!values.has(key))
    values.set(key, reflector.getAllAndOverride<T | undefined>(key, [handler, controller]));
  return values.get(key) as T | undefined;
}
