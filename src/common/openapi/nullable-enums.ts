/**
 * Adds `null` to the `enum` of every schema that is also `nullable`. In OpenAPI 3.0.3 `nullable`
 * does not extend an `enum` ("a nullable enum must list null"), so a validator or client generator
 * that keeps to the text refused every real `null`: hey-api typed `network` as never null, and its
 * validating client threw on a health answer while the metagraph was unread (an audit's finding).
 * Done here, once, so that a DTO says `nullable: true` as everywhere else. Examples are left
 * alone: they are values, not schemas.
 */
export function listNullInNullableEnums(value: unknown): void {
  if (typeof value !== 'object' || value === null) return;
  if (Array.isArray(value)) {
    for (const child of value) listNullInNullableEnums(child);
    return;
  }
  const node = value as Record<string, unknown>;
  if (node.nullable === true && Array.isArray(node.enum) && !node.enum.includes(null))
    node.enum = [...(node.enum as unknown[]), null];
  for (const [key, child] of Object.entries(node))
    if (key !== 'example' && key !== 'examples') listNullInNullableEnums(child);
}
