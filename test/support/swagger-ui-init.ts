import vm from 'node:vm';

/**
 * Runs the Swagger UI's `swagger-ui-init.js` as the page does once loaded, with stand-ins for
 * the browser's `window` and for the bundles the page loads before it, and returns the options
 * it gives `SwaggerUIBundle`. A script that does not compile throws here, as it leaves the page
 * blank in a browser.
 */
export function swaggerUiOptionsOf(script: string): Record<string, unknown> {
  let options: Record<string, unknown> | undefined;
  const SwaggerUIBundle = Object.assign(
    (given: Record<string, unknown>) => {
      options = given;
      return {};
    },
    { presets: { apis: {} }, plugins: { DownloadUrl: {} } },
  );
  const window: { location: object; onload?: () => void } = {
    location: { search: '', origin: 'http://gateway.test' },
  };
  const context = vm.createContext({ window, SwaggerUIBundle, SwaggerUIStandalonePreset: {} });
  new vm.Script(script, { filename: 'swagger-ui-init.js' }).runInContext(context);
  window.onload?.();
  if (!options) throw new Error('swagger-ui-init.js did not call SwaggerUIBundle once loaded');
  // Plain objects of this realm, so that they compare with the served document.
  return JSON.parse(JSON.stringify(options)) as Record<string, unknown>;
}
