import { APIConnectionError, APIUserAbortError, NeuroError, errorFromResponse } from './errors.js';
/** Bounds one event and one line, so that a broken server cannot make the client buffer without limit. */
const maxEventChars = 8 << 20;
/**
 * SSEDecoder parses the text/event-stream format (WHATWG HTML, "server-sent
 * events") incrementally: feed it text as it arrives and it returns the
 * events completed so far. Lines end with \n, \r\n or \r, also when the
 * two characters of \r\n arrive in different pieces; comments and the
 * `id` and `retry` fields are skipped.
 */
export class SSEDecoder {
    buf = '';
    skipLF = false; // the last piece ended with \r: a \n first in the next one ends nothing
    data = [];
    dataChars = 0;
    event = '';
    /** Feeds text; returns the events it completed. */
    push(text) {
        const out = [];
        if (this.skipLF && text.startsWith('\n'))
            text = text.slice(1);
        this.skipLF = false;
        let buf = this.buf + text;
        let start = 0;
        for (;;) {
            const lf = buf.indexOf('\n', start);
            const cr = buf.indexOf('\r', start);
            let end;
            let next;
            if (cr >= 0 && (lf < 0 || cr < lf)) {
                end = cr;
                if (cr + 1 === buf.length) {
                    this.skipLF = true;
                    next = cr + 1;
                }
                else {
                    next = buf[cr + 1] === '\n' ? cr + 2 : cr + 1;
                }
            }
            else if (lf >= 0) {
                end = lf;
                next = lf + 1;
            }
            else {
                break;
            }
            const ev = this.line(buf.slice(start, end));
            if (ev)
                out.push(ev);
            start = next;
        }
        buf = buf.slice(start);
        if (buf.length > maxEventChars)
            throw new APIConnectionError(`event stream line longer than ${maxEventChars} characters`);
        this.buf = buf;
        return out;
    }
    /** Ends the input; returns true when an unfinished event or line was left (the stream was cut off). */
    end() {
        return this.buf !== '' || this.data.length > 0;
    }
    line(line) {
        if (line === '') {
            if (this.data.length === 0) {
                this.event = '';
                return undefined;
            }
            const ev = { event: this.event, data: this.data.join('\n') };
            this.data = [];
            this.dataChars = 0;
            this.event = '';
            return ev;
        }
        if (line.charCodeAt(0) === 58 /* : */)
            return undefined; // a comment
        const colon = line.indexOf(':');
        let field = line;
        let value = '';
        if (colon >= 0) {
            field = line.slice(0, colon);
            value = line.charCodeAt(colon + 1) === 32 /* space */ ? line.slice(colon + 2) : line.slice(colon + 1);
        }
        if (field === 'data') {
            this.dataChars += value.length;
            if (this.dataChars > maxEventChars)
                throw new APIConnectionError(`event larger than ${maxEventChars} characters`);
            this.data.push(value);
        }
        else if (field === 'event') {
            this.event = value;
        }
        return undefined;
    }
}
/**
 * Reads what follows [DONE] (normally nothing: the response ends there), so
 * that the connection can serve the next request; false when more than a
 * little follows, and the connection is to be closed instead.
 */
async function drain(reader) {
    let bytes = 0;
    for (;;) {
        const r = await reader.read().catch(() => undefined);
        if (!r)
            return false;
        if (r.done)
            return true;
        bytes += r.value.byteLength;
        if (bytes > 64 << 10)
            return false;
    }
}
/**
 * A streamed answer: an async iterable of its chunks, to be consumed once
 * with `for await`. Breaking out of the loop (or an error in it) closes the
 * connection, and the server stops generating. `controller.abort()` does
 * the same from elsewhere.
 *
 * The stream ends after `data: [DONE]` or, for a response's stream, after
 * its last event (response.completed, response.incomplete or
 * response.failed; the Responses API sends no [DONE]). An error the server
 * sends in the middle of a chunk stream is thrown as its NeuroError kind
 * (with no `status`); a response's stream carries it as an `error` event
 * instead. A connection that ends before the stream's end throws an
 * APIConnectionError.
 */
export class Stream {
    /** The HTTP response whose body is being read. */
    response;
    /** Aborting it closes the connection. */
    controller;
    consumed = false;
    release;
    endEvents;
    /**
     * release, when given, is called once the stream has ended (or was left);
     * endEvents, when given, are the event types after which it ends (else it
     * ends at data: [DONE]).
     */
    constructor(response, controller, release, endEvents) {
        this.response = response;
        this.controller = controller;
        this.release = release;
        this.endEvents = endEvents;
    }
    async *[Symbol.asyncIterator]() {
        if (this.consumed)
            throw new Error('neuro: a Stream can be iterated only once');
        this.consumed = true;
        const body = this.response.body;
        if (!body)
            throw new APIConnectionError('the response has no body');
        const reader = body.getReader();
        const text = new TextDecoder();
        const sse = new SSEDecoder();
        let done = false;
        try {
            for (;;) {
                let r;
                try {
                    r = await reader.read();
                }
                catch (err) {
                    throw this.readError(err);
                }
                const events = sse.push(r.done ? text.decode() : text.decode(r.value, { stream: true }));
                for (const ev of events) {
                    if (ev.data === '[DONE]') {
                        done = await drain(reader);
                        return;
                    }
                    const v = this.decode(ev);
                    yield v;
                    if (this.endEvents && (this.endEvents.has(ev.event) || this.endEvents.has(v.type))) {
                        done = await drain(reader);
                        return;
                    }
                }
                if (r.done) {
                    const end = this.endEvents ? 'its last event' : '[DONE]';
                    throw new APIConnectionError(`the stream ended before ${end}${sse.end() ? ' (in the middle of an event)' : ''}`, {
                        headers: this.response.headers,
                    });
                }
            }
        }
        finally {
            if (!done) {
                // Left early (break, return, an error): close the connection.
                this.controller.abort();
                reader.cancel().catch(() => { });
            }
            this.release?.();
        }
    }
    decode({ event, data }) {
        let v;
        try {
            v = JSON.parse(data);
        }
        catch (err) {
            throw new NeuroError(`an event that is not JSON: ${data.slice(0, 200)}`, { headers: this.response.headers, cause: err });
        }
        // A chunk never has an "error" key: an event that has one is the server's
        // last word. (A response's events are named, and a failed response
        // carries an "error" of its own.)
        if (typeof v === 'object' && v !== null && 'error' in v && v.error && (!this.endEvents || event === '')) {
            throw errorFromResponse(undefined, v, this.response.headers);
        }
        return v;
    }
    readError(err) {
        if (err instanceof NeuroError)
            return err;
        if (this.controller.signal.aborted)
            return new APIUserAbortError(undefined, { cause: err });
        return new APIConnectionError('the connection ended in the middle of the stream', { headers: this.response.headers, cause: err });
    }
}
