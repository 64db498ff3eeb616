/**
 * The errors a call can throw. Every one is a NeuroError; those the server
 * sent carry the fields of its `{"error":{message,type,param,code}}` body,
 * and their class says what kind of failure it was:
 *
 * | class                     | when                                         |
 * |---------------------------|----------------------------------------------|
 * | BadRequestError           | 400: a missing, invalid or out-of-range field |
 * | AuthenticationError       | 401: a missing or wrong API key              |
 * | PermissionDeniedError     | 403: e.g. deleting the server's own deployment |
 * | NotFoundError             | 404: an unknown model, deployment or route   |
 * | ConflictError             | 409: an id that is taken, a network in use   |
 * | UnprocessableEntityError  | 422: a network the compiler or device refuses |
 * | RateLimitError            | 429: the key's rate limit, or its quota      |
 * | InternalServerError       | 5xx                                          |
 * | APIConnectionError        | no answer: refused, reset, cut off mid-stream |
 * | APITimeoutError           | no answer within the timeout                 |
 * | APIUserAbortError         | the caller's AbortSignal fired               |
 *
 * Other statuses (405, 408, 413, 415) are plain NeuroErrors with `status`.
 */
/** The error object of a failed response's body. */
export interface ErrorObject {
    message: string;
    type: string;
    param: string | null;
    code: string | null;
}
export interface NeuroErrorInit {
    status?: number;
    error?: ErrorObject;
    headers?: Headers;
    cause?: unknown;
}
export declare class NeuroError extends Error {
    /** The HTTP status; undefined when no response came, or for an error event that ended a stream. */
    readonly status: number | undefined;
    /** The error's type, such as `invalid_request_error` or `rate_limit_error`. */
    readonly type: string | undefined;
    /** The machine-readable reason, such as `model_not_found`; null when the server sent none. */
    readonly code: string | null;
    /** The request field at fault (`messages[1].role`, `inputs[3]`); null when none is. */
    readonly param: string | null;
    /** The error object as the server sent it. */
    readonly error: ErrorObject | undefined;
    /** The response's headers. */
    readonly headers: Headers | undefined;
    /** The response's x-request-id, to quote in a report. */
    readonly requestID: string | undefined;
    constructor(message: string, init?: NeuroErrorInit);
}
export declare class BadRequestError extends NeuroError {
}
export declare class AuthenticationError extends NeuroError {
}
export declare class PermissionDeniedError extends NeuroError {
}
export declare class NotFoundError extends NeuroError {
}
export declare class ConflictError extends NeuroError {
}
export declare class UnprocessableEntityError extends NeuroError {
}
export declare class RateLimitError extends NeuroError {
}
export declare class InternalServerError extends NeuroError {
}
/** No answer came: the connection was refused, reset, or cut off before the response (or the stream) ended. */
export declare class APIConnectionError extends NeuroError {
    constructor(message?: string, init?: NeuroErrorInit);
}
/** No answer came within the timeout. */
export declare class APITimeoutError extends APIConnectionError {
    constructor(message?: string, init?: NeuroErrorInit);
}
/** The caller's AbortSignal ended the request. */
export declare class APIUserAbortError extends NeuroError {
    constructor(message?: string, init?: NeuroErrorInit);
}
/**
 * The error for a failed response (status given) or for an error event
 * that ended a stream (status undefined). `body` is the parsed response
 * body, or its text when it was not JSON.
 */
export declare function errorFromResponse(status: number | undefined, body: unknown, headers: Headers | undefined): NeuroError;
