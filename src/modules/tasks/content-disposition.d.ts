// The `content-disposition` package (Express's own, for res.attachment) ships no types.
declare module 'content-disposition' {
  /** `attachment; filename="…"`, with `filename*` when the name needs it or has a fallback. */
  function contentDisposition(
    filename?: string,
    options?: { type?: string; fallback?: string | boolean },
  ): string;
  export = contentDisposition;
}
