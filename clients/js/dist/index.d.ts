/**
 * neuro-client: the JavaScript and TypeScript client of Neuro's REST API.
 *
 * ESM with no dependency: it needs only fetch and ReadableStream, so it runs
 * in Node 20+ and in browsers without a build step. Start with the Neuro class.
 */
export { Neuro, Neuro as default, type Health } from './client.js';
export { VERSION } from './version.js';
export type { ClientOptions, RequestOptions } from './core.js';
export { NeuroError, BadRequestError, AuthenticationError, PermissionDeniedError, NotFoundError, ConflictError, UnprocessableEntityError, RateLimitError, InternalServerError, APIConnectionError, APITimeoutError, APIUserAbortError, type ErrorObject, } from './errors.js';
export { Stream, SSEDecoder, type ServerSentEvent } from './streaming.js';
export { packEvents, packRaster } from './resources/deployments.js';
export { ListPromise, type List } from './list.js';
export type * from './resources/shared.js';
export type * from './resources/chat.js';
export type * from './resources/completions.js';
export type * from './resources/responses.js';
export type * from './resources/models.js';
export type * from './resources/deployments.js';
export type * from './resources/networks.js';
export type * from './resources/telemetry.js';
