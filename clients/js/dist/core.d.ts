import { Stream } from './streaming.js';
/** Options of a client; every one has a default. */
export interface ClientOptions {
    /**
     * The server's root, such as `http://127.0.0.1:8080`; a trailing `/v1`
     * (the OpenAI clients' form) is accepted, and a server mounted under a
     * prefix is reached through it (`https://example.com/neuro`). Default:
     * the environment's NEURO_BASE_URL, else `http://127.0.0.1:8080`.
     */
    baseURL?: string;
    /** Sent as `Authorization: Bearer <apiKey>`. Default: the environment's NEURO_API_KEY, else none. */
    apiKey?: string;
    /**
     * Milliseconds one attempt may take: until the response has been read,
     * or, for a stream, until its headers have arrived. Default 600000 (10 minutes).
     */
    timeout?: number;
    /** How many times a failed call is tried again (see RequestOptions.idempotent). Default 2. */
    maxRetries?: number;
    /** The fetch to call. Default globalThis.fetch. */
    fetch?: typeof fetch;
    /**
     * Headers sent with every request. A browser calling another origin
     * sends a preflight for any header the server's CORS policy does not
     * allow; the server allows Authorization and Content-Type.
     */
    defaultHeaders?: Record<string, string>;
}
/** Options of one call, overriding the client's. */
export interface RequestOptions {
    /** Aborting it ends the call (and a stream) with an APIUserAbortError. */
    signal?: AbortSignal;
    timeout?: number;
    maxRetries?: number;
    headers?: Record<string, string>;
    /**
     * Whether the call may be sent again after a connection error or a
     * timeout, when the server may already have received it. Default: true
     * for GET and DELETE, false for POST (a compile, a generation or a run
     * would be done twice). Answers of 429 and 503, and connections that
     * failed before the request went out, are retried whatever this says.
     */
    idempotent?: boolean;
}
export declare const DEFAULT_BASE_URL = "http://127.0.0.1:8080";
export declare const DEFAULT_TIMEOUT = 600000;
export declare const DEFAULT_MAX_RETRIES = 2;
/** A Retry-After longer than this is not waited for: the error is thrown. */
export declare const MAX_RETRY_AFTER = 60000;
/** Reads an environment variable where there is one (Node's process.env); undefined in a browser. */
export declare function readEnv(name: string): string | undefined;
/** Returns the server root that baseURL names, without a trailing slash or /v1. */
export declare function normalizeBaseURL(baseURL: string): string;
/** Escapes one path segment (an id). */
export declare function segment(id: string): string;
/** One HTTP call as a resource describes it. */
export interface Call {
    method: 'GET' | 'POST' | 'DELETE';
    /** The path under the base URL, its segments already escaped. */
    path: string;
    query?: Record<string, string | undefined>;
    /** Sent as JSON when defined. */
    body?: unknown;
    options?: RequestOptions | undefined;
    /** Statuses besides 2xx whose body is the answer (health's 503). */
    accept?: number;
}
/** The wait a response asks for (retry-after-ms, or Retry-After in seconds or as a date), in ms. */
export declare function retryAfter(headers: Headers): number | undefined;
/** Exponential backoff with jitter: about 0.5 s, 1 s, 2 s, ... up to 8 s. */
export declare function backoff(attempt: number): number;
/** Resolves after ms, or rejects with an APIUserAbortError when signal fires first. */
export declare function sleep(ms: number, signal?: AbortSignal): Promise<void>;
/**
 * Transport sends the calls of one client: it builds the request, applies
 * the timeout, retries what may be retried, and turns failures into
 * NeuroErrors. It is immutable and safe to share.
 */
export declare class Transport {
    readonly baseURL: string;
    readonly apiKey: string | undefined;
    readonly timeout: number;
    readonly maxRetries: number;
    readonly defaultHeaders: Record<string, string>;
    readonly fetch: typeof fetch;
    constructor(o: ClientOptions);
    /** Sends a call and returns its JSON answer. */
    json<T>(call: Call): Promise<T>;
    /** Sends a call and returns its answer as text. */
    text(call: Call): Promise<string>;
    /**
     * Sends a call whose answer is a stream of server-sent events; with
     * endEvents, the stream ends after an event of one of those types instead
     * of at data: [DONE].
     */
    stream<T>(call: Call, endEvents?: ReadonlySet<string>): Promise<Stream<T>>;
    private url;
    private headers;
    private send;
    /** Sends one attempt; it returns the answer, or the failure and how long to wait before the next attempt (undefined: none). */
    private attempt;
}
