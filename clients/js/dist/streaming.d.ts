/** One server-sent event: its `event` field (empty when absent) and its data lines joined by newlines. */
export interface ServerSentEvent {
    event: string;
    data: string;
}
/**
 * SSEDecoder parses the text/event-stream format (WHATWG HTML, "server-sent
 * events") incrementally: feed it text as it arrives and it returns the
 * events completed so far. Lines end with \n, \r\n or \r, also when the
 * two characters of \r\n arrive in different pieces; comments and the
 * `id` and `retry` fields are skipped.
 */
export declare class SSEDecoder {
    private buf;
    private skipLF;
    private data;
    private dataChars;
    private event;
    /** Feeds text; returns the events it completed. */
    push(text: string): ServerSentEvent[];
    /** Ends the input; returns true when an unfinished event or line was left (the stream was cut off). */
    end(): boolean;
    private line;
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
export declare class Stream<T> implements AsyncIterable<T> {
    /** The HTTP response whose body is being read. */
    readonly response: Response;
    /** Aborting it closes the connection. */
    readonly controller: AbortController;
    private consumed;
    private readonly release;
    private readonly endEvents;
    /**
     * release, when given, is called once the stream has ended (or was left);
     * endEvents, when given, are the event types after which it ends (else it
     * ends at data: [DONE]).
     */
    constructor(response: Response, controller: AbortController, release?: () => void, endEvents?: ReadonlySet<string>);
    [Symbol.asyncIterator](): AsyncIterator<T>;
    private decode;
    private readError;
}
