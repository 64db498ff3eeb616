/**
 * neuro-client: the JavaScript and TypeScript client of Neuro's REST API.
 *
 * ESM with no dependency: it needs only fetch and ReadableStream, so it runs
 * in Node 20+ and in browsers without a build step. Start with the Neuro class.
 */
export { Neuro, Neuro as default } from './client.js';
export { VERSION } from './version.js';
export { NeuroError, BadRequestError, AuthenticationError, PermissionDeniedError, NotFoundError, ConflictError, UnprocessableEntityError, RateLimitError, InternalServerError, APIConnectionError, APITimeoutError, APIUserAbortError, } from './errors.js';
export { Stream, SSEDecoder } from './streaming.js';
export { packEvents, packRaster } from './resources/deployments.js';
export { ListPromise } from './list.js';
