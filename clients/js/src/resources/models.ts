import { segment, type RequestOptions, type Transport } from '../core.js';
import { ListPromise, type List } from '../list.js';
import type { Deleted } from './shared.js';

/** What a model can serve. A compiled network serves none of these: it runs (Deployments.run). */
export interface ModelCapabilities {
  chat: boolean;
  completions: boolean;
  streaming: boolean;
  logprobs: boolean;
}

/** A model's network. */
export interface ModelNeuromorphic {
  neurons: number;
  synapses: number;
  layers: number;
  parameters: number;
  /** Language models. */
  timesteps_per_token?: number;
  /** Networks that classify or run samples. */
  timesteps_per_sample?: number;
  /** length 0 is unbounded (the recurrent state does not grow). */
  context: { handling: string; length: number };
  /** The devices it is deployed on and the registered devices it fits. */
  devices: string[];
  mock?: boolean;
}

/** A built-in model's card. */
export interface ModelCard {
  description?: string;
  architecture?: string;
  parameters?: number;
  neurons?: number;
  synapses?: number;
  training?: string;
  license?: string;
  /** Held-out bits per byte, spiking cost, accuracy per device. */
  quality?: Record<string, number>;
  /** Timesteps, sparsity, speed, and how each was measured. */
  extra?: Record<string, unknown>;
}

export interface Model {
  id: string;
  object: 'model';
  created: number;
  /** `system` for the built-in models; the principal that compiled a network. */
  owned_by: string;
  capabilities: ModelCapabilities;
  neuromorphic: ModelNeuromorphic | null;
  description?: string;
  card?: ModelCard;
}

export type ModelDeleted = Deleted<'model'>;

export class Models {
  readonly #t: Transport;

  constructor(transport: Transport) {
    this.#t = transport;
  }

  /** Lists the built-in models and the networks the caller compiled. */
  list(options?: RequestOptions): ListPromise<Model> {
    return new ListPromise(this.#t.json<List<Model>>({ method: 'GET', path: '/v1/models', options }));
  }

  /** Describes one model; `neuro-1` answers as `neuro-1-standard`. */
  retrieve(id: string, options?: RequestOptions): Promise<Model> {
    return this.#t.json({ method: 'GET', path: `/v1/models/${segment(id)}`, options });
  }

  /** Deletes a network the caller compiled (ConflictError while a deployment uses it). */
  delete(id: string, options?: RequestOptions): Promise<ModelDeleted> {
    return this.#t.json({ method: 'DELETE', path: `/v1/models/${segment(id)}`, options });
  }
}
