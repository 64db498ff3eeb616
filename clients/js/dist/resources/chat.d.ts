import { type RequestOptions, type Transport } from '../core.js';
import type { Stream } from '../streaming.js';
import type { CompletionUsage, FinishReason, LayerActivity, SamplingParams } from './shared.js';
/** A role: `developer` is treated as `system`. */
export type ChatRole = 'system' | 'developer' | 'user' | 'assistant';
/** One turn of a chat. Content is a string or text parts (joined); null only in an assistant turn. */
export interface ChatCompletionMessageParam {
    role: ChatRole;
    content: string | Array<{
        type: 'text';
        text: string;
    }> | null;
    name?: string;
}
export interface ChatCompletionCreateParamsBase extends SamplingParams {
    /** A model id (`neuro-1-lite`, `neuro-1-standard`, `neuro-1-heavy`, the alias `neuro-1`); may be left out with `deployment`. */
    model?: string;
    /**
     * A deployment to answer through (POST /v1/deployments/{id}/chat/completions).
     * It is a client-side field: it chooses the URL and is not sent in the body.
     */
    deployment?: string;
    messages: ChatCompletionMessageParam[];
    /** At least 1; absent, the model runs to its end or the server's limit. */
    max_tokens?: number | null;
    /** The newer name of max_tokens; give one. */
    max_completion_tokens?: number | null;
    /** Asks for each token's log-probability. */
    logprobs?: boolean | null;
    /** 0..20 alternatives per position (needs logprobs). */
    top_logprobs?: number | null;
    stream?: boolean | null;
}
export interface ChatCompletionCreateParamsNonStreaming extends ChatCompletionCreateParamsBase {
    stream?: false | null;
}
export interface ChatCompletionCreateParamsStreaming extends ChatCompletionCreateParamsBase {
    stream: true;
}
export type ChatCompletionCreateParams = ChatCompletionCreateParamsNonStreaming | ChatCompletionCreateParamsStreaming;
export interface ChatCompletionTokenLogprob {
    token: string;
    /** Minus infinity is sent as -9999. */
    logprob: number;
    /** The token's UTF-8 bytes (its token is U+FFFD when they are part of a character). */
    bytes: number[];
    top_logprobs?: ChatCompletionTokenLogprob[];
}
export interface ChatCompletionLogprobs {
    content: ChatCompletionTokenLogprob[];
}
export interface ChatCompletionMessage {
    role: 'assistant';
    content: string;
}
export interface ChatCompletionChoice {
    index: number;
    message: ChatCompletionMessage;
    logprobs: ChatCompletionLogprobs | null;
    finish_reason: FinishReason;
}
export interface ChatCompletion {
    id: string;
    object: 'chat.completion';
    created: number;
    model: string;
    choices: ChatCompletionChoice[];
    usage: CompletionUsage;
}
export interface ChatCompletionChunkChoice {
    index: number;
    /** The first chunk of a choice carries the role; the last has an empty delta and the finish_reason. */
    delta: {
        role?: 'assistant';
        content?: string;
    };
    logprobs: ChatCompletionLogprobs | null;
    finish_reason: FinishReason | null;
}
export interface ChatCompletionChunk {
    id: string;
    object: 'chat.completion.chunk';
    created: number;
    model: string;
    /** Empty in the last chunk of a stream with stream_options.include_usage, which carries the usage. */
    choices: ChatCompletionChunkChoice[];
    usage?: CompletionUsage;
    /** With `neuro: {activity: true}`: the neurons that fired for this chunk's tokens, per spiking layer. */
    neuro?: {
        activity: LayerActivity[];
    };
}
export declare class Chat {
    readonly completions: ChatCompletions;
    constructor(transport: Transport);
}
export declare class ChatCompletions {
    #private;
    constructor(transport: Transport);
    /**
     * Asks for a chat completion; with `stream: true` the answer is a Stream
     * of chunks. With `deployment`, the request goes through that deployment
     * (and `model` may be left out).
     */
    create(body: ChatCompletionCreateParamsNonStreaming, options?: RequestOptions): Promise<ChatCompletion>;
    create(body: ChatCompletionCreateParamsStreaming, options?: RequestOptions): Promise<Stream<ChatCompletionChunk>>;
    create(body: ChatCompletionCreateParams, options?: RequestOptions): Promise<ChatCompletion | Stream<ChatCompletionChunk>>;
}
