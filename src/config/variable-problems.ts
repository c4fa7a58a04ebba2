import { plainToInstance } from 'class-transformer';
import { ValidationError, validateSync } from 'class-validator';
import { EnvironmentVariables } from './environment-variables';

/**
 * What the rules of variable `name` say of `value`, as loadConfig would (without the name): for
 * a value that stands in for an unset variable, held to its rules (the development master-key
 * file for MASTER_KEY). Empty when the value passes.
 */
export function variableProblems(name: keyof EnvironmentVariables, value: string): string[] {
  const vars = plainToInstance(EnvironmentVariables, { [name]: value });
  return validateSync(vars, { skipMissingProperties: false })
    .filter((error) => error.property === name)
    .flatMap(messagesOf);
}

/** A refused variable's messages, plainly worded and the type check alone when it failed. */
export function messagesOf(error: ValidationError): string[] {
  return typeFirst(error.constraints ?? {}).map((message) => plainMessage(error.property, message));
}

/**
 * A variable's failed constraints, the type's alone when it is not even of its type: `abc` is
 * not an integer, and "must not be less than 1" beside that would mislead.
 */
function typeFirst(constraints: Record<string, string>): string[] {
  const typeChecks = ['isInt', 'isNumber'].filter((name) => name in constraints);
  return (typeChecks.length > 0 ? typeChecks : Object.keys(constraints)).map(
    (name) => constraints[name],
  );
}

/**
 * class-validator's own messages begin with the variable's name, which the problem already
 * leads with ("PORT: PORT must not be less than 1" read as a stutter), and its number message
 * speaks of constraints the operator cannot see: a value that is not a number is refused as such.
 */
function plainMessage(property: string, message: string): string {
  const own = message.startsWith(`${property} `) ? message.slice(property.length + 1) : message;
  return own === 'must be a number conforming to the specified constraints'
    ? 'must be a number'
    : own;
}

/** Runs a parser of one variable; its error becomes a problem naming the variable. */
export function parsed<T>(problems: string[], name: string, parse: () => T): T | undefined {
  try {
    return parse();
  } catch (error) {
    problems.push(`${name}: ${(error as Error).message}`);
    return undefined;
  }
}
