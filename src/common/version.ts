/** The interface version served by this build (OpenAPI document and health). */
export const API_VERSION = '1.0.0';
