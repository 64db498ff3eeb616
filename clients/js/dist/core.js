import { APIConnectionError, APITimeoutError, APIUserAbortError, NeuroError, errorFromResponse, } from './errors.js';
import { Stream } from './streaming.js';
export const DEFAULT_BASE_URL = 'http://127.0.0.1:8080';
export const DEFAULT_TIMEOUT = 600_000;
export const DEFAULT_MAX_RETRIES = 2;
/** A Retry-After longer than this is not waited for: the error is thrown. */
export const MAX_RETRY_AFTER = 60_000;
/** Reads an environment variable where there is one (Node's process.env); undefined in a browser. */
export function readEnv(name) {
    const proc = globalThis.process;
    const v = proc?.env?.[name]?.trim();
    return v ? v : undefined;
}
/** Returns the server root that baseURL names, without a trailing slash or /v1. */
export function normalizeBaseURL(baseURL) {
    let u;
    try {
        u = new URL(baseURL);
    }
    catch {
        throw new NeuroError(`neuro: base URL ${JSON.stringify(baseURL)} is not a URL`);
    }
    if (u.protocol !== 'http:' && u.protocol !== 'https:') {
        throw new NeuroError(`neuro: base URL ${JSON.stringify(baseURL)}: want http(s)://host[:port][/prefix]`);
    }
    if (u.search || u.hash || u.username || u.password) {
        throw new NeuroError(`neuro: base URL ${JSON.stringify(baseURL)}: no query, fragment or user info`);
    }
    let path = u.pathname.replace(/\/+$/, '');
    if (path.endsWith('/v1'))
        path = path.slice(0, -3);
    return u.origin + path;
}
/** Escapes one path segment (an id). */
export function segment(id) {
    if (typeof id !== 'string' || id === '')
        throw new TypeError('neuro: an id must be a non-empty string');
    return encodeURIComponent(id);
}
/** The error codes of a connection that failed before any byte of the request went out. */
const notSentCodes = new Set([
    'ECONNREFUSED',
    'ENOTFOUND',
    'EAI_AGAIN',
    'ENETUNREACH',
    'EHOSTUNREACH',
    'EADDRNOTAVAIL',
    'UND_ERR_CONNECT_TIMEOUT',
]);
/** Whether a fetch failure is known to have happened before the request was sent (Node's fetch says so; a browser's does not). */
function notSent(err) {
    for (let e = err, depth = 0; e && typeof e === 'object' && depth < 4; depth++) {
        const code = e.code;
        if (typeof code === 'string')
            return notSentCodes.has(code);
        const errors = e.errors; // AggregateError: every address refused
        if (Array.isArray(errors) && errors.length > 0)
            return errors.every(notSent);
        e = e.cause;
    }
    return false;
}
/** The wait a response asks for (retry-after-ms, or Retry-After in seconds or as a date), in ms. */
export function retryAfter(headers) {
    const ms = headers.get('retry-after-ms');
    if (ms) {
        const n = Number(ms);
        if (Number.isFinite(n) && n >= 0)
            return n;
    }
    const v = headers.get('retry-after');
    if (!v)
        return undefined;
    const s = Number(v);
    if (Number.isFinite(s))
        return s >= 0 ? s * 1000 : undefined;
    const t = Date.parse(v);
    return Number.isNaN(t) ? undefined : Math.max(0, t - Date.now());
}
/** Exponential backoff with jitter: about 0.5 s, 1 s, 2 s, ... up to 8 s. */
export function backoff(attempt) {
    return Math.min(500 * 2 ** attempt, 8000) * (1 - 0.25 * Math.random());
}
/** Resolves after ms, or rejects with an APIUserAbortError when signal fires first. */
export function sleep(ms, signal) {
    return new Promise((resolve, reject) => {
        if (signal?.aborted) {
            reject(new APIUserAbortError());
            return;
        }
        const onAbort = () => {
            clearTimeout(timer);
            reject(new APIUserAbortError());
        };
        const timer = setTimeout(() => {
            signal?.removeEventListener('abort', onAbort);
            resolve();
        }, ms);
        signal?.addEventListener('abort', onAbort, { once: true });
    });
}
/**
 * Transport sends the calls of one client: it builds the request, applies
 * the timeout, retries what may be retried, and turns failures into
 * NeuroErrors. It is immutable and safe to share.
 */
export class Transport {
    baseURL;
    apiKey;
    timeout;
    maxRetries;
    defaultHeaders;
    fetch;
    constructor(o) {
        this.baseURL = normalizeBaseURL(o.baseURL ?? readEnv('NEURO_BASE_URL') ?? DEFAULT_BASE_URL);
        this.apiKey = o.apiKey ?? readEnv('NEURO_API_KEY');
        this.timeout = o.timeout ?? DEFAULT_TIMEOUT;
        this.maxRetries = o.maxRetries ?? DEFAULT_MAX_RETRIES;
        this.defaultHeaders = o.defaultHeaders ?? {};
        const f = o.fetch ?? globalThis.fetch;
        if (typeof f !== 'function')
            throw new NeuroError('neuro: no fetch: pass ClientOptions.fetch');
        // Called unbound, a browser's fetch throws "Illegal invocation".
        this.fetch = o.fetch ?? ((input, init) => globalThis.fetch(input, init));
        if (!(this.timeout > 0))
            throw new NeuroError(`neuro: timeout ${this.timeout}: want a positive number of ms`);
        if (!(this.maxRetries >= 0))
            throw new NeuroError(`neuro: maxRetries ${this.maxRetries}: want 0 or more`);
    }
    /** Sends a call and returns its JSON answer. */
    json(call) {
        return this.send(call, false, readJSON);
    }
    /** Sends a call and returns its answer as text. */
    text(call) {
        return this.send(call, false, (res) => res.text());
    }
    /**
     * Sends a call whose answer is a stream of server-sent events; with
     * endEvents, the stream ends after an event of one of those types instead
     * of at data: [DONE].
     */
    stream(call, endEvents) {
        return this.send(call, true, async (res, controller, release) => {
            const type = res.headers.get('content-type') ?? '';
            if (!type.startsWith('text/event-stream')) {
                const body = await res.text();
                throw new NeuroError(`neuro: expected an event stream, got ${type || 'no Content-Type'}: ${body.slice(0, 200)}`, {
                    status: res.status,
                    headers: res.headers,
                });
            }
            return new Stream(res, controller, release, endEvents);
        });
    }
    url(call) {
        let url = this.baseURL + call.path;
        if (call.query) {
            const q = new URLSearchParams();
            for (const [k, v] of Object.entries(call.query))
                if (v !== undefined)
                    q.set(k, v);
            const s = q.toString();
            if (s)
                url += '?' + s;
        }
        return url;
    }
    headers(call, streaming) {
        const h = { Accept: streaming ? 'text/event-stream' : 'application/json' };
        if (call.body !== undefined)
            h['Content-Type'] = 'application/json';
        if (this.apiKey)
            h.Authorization = `Bearer ${this.apiKey}`;
        Object.assign(h, this.defaultHeaders);
        if (call.options?.headers)
            Object.assign(h, call.options.headers);
        return h;
    }
    async send(call, streaming, read) {
        const o = call.options ?? {};
        const maxRetries = o.maxRetries ?? this.maxRetries;
        const init = { method: call.method, headers: this.headers(call, streaming) };
        if (call.body !== undefined)
            init.body = JSON.stringify(call.body);
        const a = {
            url: this.url(call),
            init,
            timeout: o.timeout ?? this.timeout,
            signal: o.signal,
            idempotent: o.idempotent ?? call.method !== 'POST',
            accept: call.accept,
            streaming,
            read,
        };
        for (let n = 0;; n++) {
            const r = await this.attempt(a, n);
            if (r.failure === undefined)
                return r.value;
            if (n >= maxRetries || r.wait === undefined)
                throw r.failure;
            await sleep(r.wait, a.signal);
        }
    }
    /** Sends one attempt; it returns the answer, or the failure and how long to wait before the next attempt (undefined: none). */
    async attempt(a, n) {
        const { signal } = a;
        if (signal?.aborted)
            throw new APIUserAbortError();
        const controller = new AbortController();
        const onAbort = () => controller.abort();
        signal?.addEventListener('abort', onAbort, { once: true });
        let timedOut = false;
        // Timers take at most 2^31-1 ms; a longer timeout is none.
        const timer = a.timeout < 2 ** 31
            ? setTimeout(() => {
                timedOut = true;
                controller.abort();
            }, a.timeout)
            : undefined;
        a.init.signal = controller.signal;
        const release = () => signal?.removeEventListener('abort', onAbort);
        let keepListening = false; // a stream keeps the caller's signal tied to its connection until it ends
        try {
            let res;
            try {
                res = await this.fetch(a.url, a.init);
            }
            catch (err) {
                const failure = fetchError(err, signal, timedOut);
                if (failure instanceof APIUserAbortError)
                    throw failure;
                // A connection refused never reached the server: any call may go again.
                const again = a.idempotent || (!timedOut && notSent(err));
                return { failure, wait: again ? backoff(n) : undefined };
            }
            if (res.ok || res.status === a.accept) {
                try {
                    const value = await a.read(res, controller, release);
                    keepListening = a.streaming;
                    return { value };
                }
                catch (err) {
                    if (err instanceof NeuroError)
                        throw err;
                    const failure = fetchError(err, signal, timedOut);
                    if (failure instanceof APIUserAbortError)
                        throw failure;
                    return { failure, wait: a.idempotent ? backoff(n) : undefined };
                }
            }
            let body;
            try {
                const text = await res.text();
                try {
                    body = JSON.parse(text);
                }
                catch {
                    body = text;
                }
            }
            catch (err) {
                if (signal?.aborted)
                    throw new APIUserAbortError(undefined, { cause: err });
                body = undefined; // the status still says what happened
            }
            const failure = errorFromResponse(res.status, body, res.headers);
            return { failure, wait: retryWait(res, failure, n) };
        }
        finally {
            clearTimeout(timer);
            if (!keepListening)
                release();
        }
    }
}
async function readJSON(res) {
    const text = await res.text();
    try {
        return JSON.parse(text);
    }
    catch (err) {
        throw new NeuroError(`neuro: a ${res.status} answer that is not JSON: ${text.slice(0, 200)}`, {
            status: res.status,
            headers: res.headers,
            cause: err,
        });
    }
}
/** The NeuroError for a fetch (or body read) that failed without an HTTP answer. */
function fetchError(err, signal, timedOut) {
    if (signal?.aborted)
        return new APIUserAbortError(undefined, { cause: err });
    if (timedOut)
        return new APITimeoutError(undefined, { cause: err });
    const detail = err instanceof Error && err.cause instanceof Error ? `: ${err.cause.message}` : '';
    return new APIConnectionError(`Connection error${detail}.`, { cause: err });
}
/**
 * How long to wait before trying a failed answer again, or undefined when
 * it must not be: 429 and 503 are retried (a quota that is used up is
 * not: waiting does not free it), and the server's Retry-After is honoured
 * up to MAX_RETRY_AFTER.
 */
function retryWait(res, err, attempt) {
    if (res.status !== 429 && res.status !== 503)
        return undefined;
    if (err.code === 'insufficient_quota')
        return undefined;
    const after = retryAfter(res.headers);
    if (after === undefined)
        return backoff(attempt);
    return after <= MAX_RETRY_AFTER ? after : undefined;
}
