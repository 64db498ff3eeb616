import { segment, type RequestOptions, type Transport } from '../core.js';
import type { Stream } from '../streaming.js';
import type { Deleted, NeuromorphicUsage } from './shared.js';

/** One message of a response's input. Content is a string or input_text parts. */
export interface ResponseInputItem {
  type?: 'message';
  role: 'user' | 'system' | 'developer' | 'assistant';
  content: string | Array<{ type: 'input_text'; text: string }>;
}

export interface ResponseCreateParamsBase {
  /** A model id, alias or deployment id, as for chat. */
  model: string;
  /** A string (one user message) or message items. */
  input: string | ResponseInputItem[];
  /** A system message for this turn only; it is not carried to the next. */
  instructions?: string | null;
  /** Continues the conversation that response ended (with the same model). */
  previous_response_id?: string | null;
  /** Default true; false keeps the response from being stored (it cannot be retrieved or continued). */
  store?: boolean | null;
  max_output_tokens?: number | null;
  /** 0..2, default 1; 0 is greedy. */
  temperature?: number | null;
  /** 0..1, default 1. */
  top_p?: number | null;
  /** Up to 16 string pairs, stored with the response. */
  metadata?: Record<string, string> | null;
  /** Identifies the end user. */
  user?: string | null;
  stream?: boolean | null;
}

export interface ResponseCreateParamsNonStreaming extends ResponseCreateParamsBase {
  stream?: false | null;
}

export interface ResponseCreateParamsStreaming extends ResponseCreateParamsBase {
  stream: true;
}

export type ResponseCreateParams = ResponseCreateParamsNonStreaming | ResponseCreateParamsStreaming;

export interface ResponseOutputText {
  type: 'output_text';
  text: string;
  annotations: unknown[];
}

export interface ResponseOutputMessage {
  type: 'message';
  id: string;
  status: 'in_progress' | 'completed' | 'incomplete';
  role: 'assistant';
  content: ResponseOutputText[];
}

export interface ResponseUsage {
  /** The whole context the model saw this turn, earlier turns included. */
  input_tokens: number;
  /** cached_tokens: the part of input_tokens resumed from a stored state instead of recomputed. */
  input_tokens_details: { cached_tokens: number };
  output_tokens: number;
  output_tokens_details?: { reasoning_tokens: number };
  total_tokens: number;
}

export type ResponseStatus = 'completed' | 'incomplete' | 'failed' | 'in_progress';

/** One turn of a conversation, as the server stores it. */
export interface Response {
  id: string;
  object: 'response';
  created_at: number;
  status: ResponseStatus;
  model: string;
  previous_response_id: string | null;
  instructions: string | null;
  output: ResponseOutputMessage[];
  /** The text of all the output_text parts together. */
  output_text: string;
  incomplete_details: { reason: 'max_output_tokens' | string } | null;
  error: { code: string; message: string } | null;
  store: boolean;
  /** The sampling the turn used. */
  temperature: number;
  top_p: number;
  /** As the request gave it; null where it did not. */
  max_output_tokens: number | null;
  metadata: Record<string, string>;
  /** As the request gave it. */
  user?: string;
  /**
   * The turn's tokens; null until the response is done (in the
   * response.created and response.in_progress events) and on a failed one.
   */
  usage: ResponseUsage | null;
  /** What the turn cost the device (set once the response is done). */
  neuro?: NeuromorphicUsage;
}

export type ResponseDeleted = Deleted<'response'>;

interface EventBase<Type extends string> {
  type: Type;
  sequence_number: number;
}

interface TextPosition {
  item_id: string;
  output_index: number;
  content_index: number;
}

export interface ResponseCreatedEvent extends EventBase<'response.created'> {
  response: Response;
}
export interface ResponseInProgressEvent extends EventBase<'response.in_progress'> {
  response: Response;
}
export interface ResponseOutputItemAddedEvent extends EventBase<'response.output_item.added'> {
  output_index: number;
  item: ResponseOutputMessage;
}
export interface ResponseContentPartAddedEvent extends EventBase<'response.content_part.added'>, TextPosition {
  part: ResponseOutputText;
}
/** The next piece of text. */
export interface ResponseTextDeltaEvent extends EventBase<'response.output_text.delta'>, TextPosition {
  delta: string;
  logprobs?: unknown[];
}
export interface ResponseTextDoneEvent extends EventBase<'response.output_text.done'>, TextPosition {
  text: string;
}
export interface ResponseContentPartDoneEvent extends EventBase<'response.content_part.done'>, TextPosition {
  part: ResponseOutputText;
}
export interface ResponseOutputItemDoneEvent extends EventBase<'response.output_item.done'> {
  output_index: number;
  item: ResponseOutputMessage;
}
export interface ResponseCompletedEvent extends EventBase<'response.completed'> {
  response: Response;
}
export interface ResponseIncompleteEvent extends EventBase<'response.incomplete'> {
  response: Response;
}
export interface ResponseFailedEvent extends EventBase<'response.failed'> {
  response: Response;
}
/** The generation failed after the stream started; a response.failed event follows. */
export interface ResponseErrorEvent extends EventBase<'error'> {
  code?: string | null;
  message: string;
  param?: string | null;
}

/** One event of a streamed response; `type` tells which. */
export type ResponseStreamEvent =
  | ResponseCreatedEvent
  | ResponseInProgressEvent
  | ResponseOutputItemAddedEvent
  | ResponseContentPartAddedEvent
  | ResponseTextDeltaEvent
  | ResponseTextDoneEvent
  | ResponseContentPartDoneEvent
  | ResponseOutputItemDoneEvent
  | ResponseCompletedEvent
  | ResponseIncompleteEvent
  | ResponseFailedEvent
  | ResponseErrorEvent;

/** The events after which a response's stream ends (it has no [DONE]). */
const endEvents: ReadonlySet<string> = new Set(['response.completed', 'response.incomplete', 'response.failed']);

export class Responses {
  readonly #t: Transport;

  constructor(transport: Transport) {
    this.#t = transport;
  }

  /**
   * Makes a response, one turn of a conversation the server stores; with
   * `previous_response_id` it continues an earlier one. With `stream: true`
   * the answer is a Stream of typed events that ends after
   * response.completed, response.incomplete or response.failed.
   */
  create(body: ResponseCreateParamsNonStreaming, options?: RequestOptions): Promise<Response>;
  create(body: ResponseCreateParamsStreaming, options?: RequestOptions): Promise<Stream<ResponseStreamEvent>>;
  create(body: ResponseCreateParams, options?: RequestOptions): Promise<Response | Stream<ResponseStreamEvent>>;
  create(body: ResponseCreateParams, options?: RequestOptions): Promise<Response | Stream<ResponseStreamEvent>> {
    const call = { method: 'POST', path: '/v1/responses', body, options } as const;
    return body.stream ? this.#t.stream<ResponseStreamEvent>(call, endEvents) : this.#t.json<Response>(call);
  }

  /** A stored response; an unknown, expired, unstored or another key's one is a NotFoundError (response_not_found). */
  retrieve(id: string, options?: RequestOptions): Promise<Response> {
    return this.#t.json({ method: 'GET', path: `/v1/responses/${segment(id)}`, options });
  }

  /** Deletes a stored response. */
  delete(id: string, options?: RequestOptions): Promise<ResponseDeleted> {
    return this.#t.json({ method: 'DELETE', path: `/v1/responses/${segment(id)}`, options });
  }
}
