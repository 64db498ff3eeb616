import type { RequestOptions, Transport } from '../core.js';
import type { Stream } from '../streaming.js';
import type { CompletionUsage, FinishReason, SamplingParams } from './shared.js';

export interface CompletionCreateParamsBase extends SamplingParams {
  model: string;
  /** A string, or 1 to 16 strings (one set of n choices each). */
  prompt: string | string[];
  /** 0 is allowed (with echo and logprobs it scores the prompt); absent, the server's limit. */
  max_tokens?: number | null;
  /** 0..5: log-probabilities with that many alternatives per position. */
  logprobs?: number | null;
  /** Prepends the prompt to each choice's text. */
  echo?: boolean | null;
  /** Only null or empty is accepted. */
  suffix?: string | null;
  stream?: boolean | null;
}

export interface CompletionCreateParamsNonStreaming extends CompletionCreateParamsBase {
  stream?: false | null;
}

/** A server in mock mode answers 400 stream_not_supported. */
export interface CompletionCreateParamsStreaming extends CompletionCreateParamsBase {
  stream: true;
}

export type CompletionCreateParams = CompletionCreateParamsNonStreaming | CompletionCreateParamsStreaming;

/** The legacy completions format; a null entry is the first token of an echoed prompt. */
export interface CompletionLogprobs {
  tokens: string[];
  token_logprobs: Array<number | null>;
  top_logprobs: Array<Record<string, number> | null>;
  text_offset: number[];
}

export interface CompletionChoice {
  text: string;
  /** With several prompts, prompt p's choices are p*n .. p*n+n-1. */
  index: number;
  logprobs: CompletionLogprobs | null;
  finish_reason: FinishReason | null;
}

/** A text completion, and also each chunk of a streamed one. */
export interface Completion {
  id: string;
  object: 'text_completion';
  created: number;
  model: string;
  choices: CompletionChoice[];
  usage?: CompletionUsage;
}

export class Completions {
  readonly #t: Transport;

  constructor(transport: Transport) {
    this.#t = transport;
  }

  /** Asks for a text completion; with `stream: true` the answer is a Stream of Completion chunks. */
  create(body: CompletionCreateParamsNonStreaming, options?: RequestOptions): Promise<Completion>;
  create(body: CompletionCreateParamsStreaming, options?: RequestOptions): Promise<Stream<Completion>>;
  create(body: CompletionCreateParams, options?: RequestOptions): Promise<Completion | Stream<Completion>>;
  create(body: CompletionCreateParams, options?: RequestOptions): Promise<Completion | Stream<Completion>> {
    const call = { method: 'POST', path: '/v1/completions', body, options } as const;
    return body.stream ? this.#t.stream<Completion>(call) : this.#t.json<Completion>(call);
  }
}
