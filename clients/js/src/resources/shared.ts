/** Types that several resources share. */

/** What an answer cost the device: an extension of the OpenAI usage that OpenAI clients ignore. */
export interface NeuromorphicUsage {
  timesteps: number;
  spikes: number;
  synaptic_ops: number;
  energy_uj: number;
}

/** The tokens of a completion, and what they cost the device. */
export interface CompletionUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  /** cached_tokens: the prompt tokens resumed from an earlier request's state instead of recomputed (0 on a miss). */
  prompt_tokens_details?: { cached_tokens: number };
  neuromorphic?: NeuromorphicUsage;
}

/** `stop`: the model ended or a stop sequence matched; `length`: max_tokens or the context limit was reached. */
export type FinishReason = 'stop' | 'length';

/** The sampling fields that chat and text completions share; null or absent means the server's default. */
export interface SamplingParams {
  /** 0..2, default 1; 0 is greedy. */
  temperature?: number | null;
  /** 0..1, default 1. */
  top_p?: number | null;
  /** Choices per prompt, 1..8, default 1. */
  n?: number | null;
  /** Up to 4 strings that end a choice; they are left out of its text. */
  stop?: string | string[] | null;
  /** The same seed, request and deployment give the same output. */
  seed?: number | null;
  /** -2..2, default 0. */
  presence_penalty?: number | null;
  /** -2..2, default 0. */
  frequency_penalty?: number | null;
  /** Token id (as a decimal string) to a bias of -100..100 added to its logit. */
  logit_bias?: Record<string, number> | null;
  /** Identifies the end user (accepted, not stored). */
  user?: string;
  stream_options?: { include_usage?: boolean } | null;
  /** Neuro's extension: with `activity: true` (streams only), each content chunk says which neurons fired. */
  neuro?: { activity?: boolean } | null;
}

/** The neurons of one spiking layer that fired while a chunk's tokens were computed. */
export interface LayerActivity {
  layer: string;
  neurons: number;
  spikes: number[];
}

/** The answer of a DELETE. */
export interface Deleted<O extends string> {
  id: string;
  object: O;
  deleted: true;
}
