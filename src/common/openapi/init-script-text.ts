/**
 * `$` followed by one of these is a pattern in a String.prototype.replace replacement (`$$`,
 * `$&`, "$`", `$'`, `$1`). `$<name>` is one only for a regular expression with named groups.
 */
const REPLACEMENT_PATTERN = /\$[$&`'\d]/;

/**
 * Throws on the first string of the document, keys included, that holds a replacement pattern,
 * naming where it is (a JSON pointer). @nestjs/swagger writes the document into the Swagger UI's
 * `swagger-ui-init.js` with `template.replace('<% swaggerOptions %>', json)` (its
 * swagger-ui/swagger-ui.js), which reads such a pattern in the JSON: "$`" in a description
 * inserted the template's start there, and the page was blank (a SyntaxError). Refused when the
 * document is built, so that the service does not start with a page that cannot load.
 */
export function refuseReplacementPatterns(value: unknown, where = '#'): void {
  if (typeof value === 'string') {
    if (REPLACEMENT_PATTERN.test(value))
      throw new Error(
        `${where}: ${JSON.stringify(value)} holds ${REPLACEMENT_PATTERN.exec(value)?.[0]}, which ` +
          "the Swagger UI's init script would read as a replacement pattern (swagger-ui-init.js); " +
          'reword it',
      );
    return;
  }
  if (typeof value !== 'object' || value === null) return;
  for (const [key, child] of Object.entries(value)) {
    const path = `${where}/${key.replaceAll('~', '~0').replaceAll('/', '~1')}`;
    refuseReplacementPatterns(key, path);
    refuseReplacementPatterns(child, path);
  }
}
