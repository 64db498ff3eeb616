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
export class NeuroError extends Error {
    /** The HTTP status; undefined when no response came, or for an error event that ended a stream. */
    status;
    /** The error's type, such as `invalid_request_error` or `rate_limit_error`. */
    type;
    /** The machine-readable reason, such as `model_not_found`; null when the server sent none. */
    code;
    /** The request field at fault (`messages[1].role`, `inputs[3]`); null when none is. */
    param;
    /** The error object as the server sent it. */
    error;
    /** The response's headers. */
    headers;
    /** The response's x-request-id, to quote in a report. */
    requestID;
    constructor(message, init = {}) {
        super(message, init.cause === undefined ? undefined : { cause: init.cause });
        this.name = new.target.name;
        this.status = init.status;
        this.error = init.error;
        this.type = init.error?.type;
        this.code = init.error?.code ?? null;
        this.param = init.error?.param ?? null;
        this.headers = init.headers;
        this.requestID = init.headers?.get('x-request-id') ?? undefined;
    }
}
export class BadRequestError extends NeuroError {
}
export class AuthenticationError extends NeuroError {
}
export class PermissionDeniedError extends NeuroError {
}
export class NotFoundError extends NeuroError {
}
export class ConflictError extends NeuroError {
}
export class UnprocessableEntityError extends NeuroError {
}
export class RateLimitError extends NeuroError {
}
export class InternalServerError extends NeuroError {
}
/** No answer came: the connection was refused, reset, or cut off before the response (or the stream) ended. */
export class APIConnectionError extends NeuroError {
    constructor(message = 'Connection error.', init = {}) {
        super(message, init);
    }
}
/** No answer came within the timeout. */
export class APITimeoutError extends APIConnectionError {
    constructor(message = 'Request timed out.', init = {}) {
        super(message, init);
    }
}
/** The caller's AbortSignal ended the request. */
export class APIUserAbortError extends NeuroError {
    constructor(message = 'Request was aborted.', init = {}) {
        super(message, init);
    }
}
const byStatus = {
    400: BadRequestError,
    401: AuthenticationError,
    403: PermissionDeniedError,
    404: NotFoundError,
    409: ConflictError,
    422: UnprocessableEntityError,
    429: RateLimitError,
};
// An error event in a stream has no status of its own: its type says the kind.
const byType = {
    invalid_request_error: BadRequestError,
    authentication_error: AuthenticationError,
    permission_error: PermissionDeniedError,
    not_found_error: NotFoundError,
    rate_limit_error: RateLimitError,
    server_error: InternalServerError,
};
/**
 * The error for a failed response (status given) or for an error event
 * that ended a stream (status undefined). `body` is the parsed response
 * body, or its text when it was not JSON.
 */
export function errorFromResponse(status, body, headers) {
    const error = errorObject(body);
    let cls = NeuroError;
    if (status === undefined) {
        cls = (error && byType[error.type]) || NeuroError;
    }
    else if (status >= 500) {
        cls = InternalServerError;
    }
    else {
        cls = byStatus[status] ?? NeuroError;
    }
    let message = error?.message;
    if (!message) {
        const text = typeof body === 'string' ? body.slice(0, 512) : '';
        message = status === undefined ? 'stream error' : `status ${status}${text ? `: ${text}` : ''}`;
    }
    return new cls(message, { status, error, headers });
}
function errorObject(body) {
    if (typeof body !== 'object' || body === null)
        return undefined;
    const e = body.error;
    if (typeof e !== 'object' || e === null)
        return undefined;
    const o = e;
    return {
        message: typeof o.message === 'string' ? o.message : '',
        type: typeof o.type === 'string' ? o.type : '',
        param: typeof o.param === 'string' ? o.param : null,
        code: typeof o.code === 'string' ? o.code : null,
    };
}
