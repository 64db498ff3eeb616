import { Transport, type ClientOptions, type RequestOptions } from './core.js';
import { Chat } from './resources/chat.js';
import { Completions } from './resources/completions.js';
import { Deployments } from './resources/deployments.js';
import { Models } from './resources/models.js';
import { Networks } from './resources/networks.js';
import { Responses } from './resources/responses.js';
import { TelemetryResource } from './resources/telemetry.js';
import type { ErrorObject } from './errors.js';

/** The server's health: `ok`, or `unavailable` with the reason. */
export interface Health {
  status: 'ok' | 'unavailable';
  mock: boolean;
  /** The server's own deployments. */
  deployments: Array<{ id: string; status: string }>;
  reason?: string;
  error?: ErrorObject;
  /** In a cluster: this node, and the cluster's nodes. */
  node?: string;
  nodes?: Array<{ name: string; up: boolean; self?: boolean }>;
}

/**
 * A client of one Neuro server. Its resources follow the REST API:
 *
 *     const client = new Neuro({ baseURL: 'http://127.0.0.1:8080', apiKey });
 *     const r = await client.chat.completions.create({ model: 'neuro-1-lite', messages, max_tokens: 32 });
 *
 * It holds no connection of its own (fetch pools them) and is safe to share.
 */
export class Neuro {
  readonly chat: Chat;
  readonly completions: Completions;
  readonly responses: Responses;
  readonly models: Models;
  readonly deployments: Deployments;
  readonly networks: Networks;
  readonly telemetry: TelemetryResource;
  readonly #t: Transport;
  readonly #options: ClientOptions;

  constructor(options: ClientOptions = {}) {
    this.#options = { ...options };
    this.#t = new Transport(options);
    this.chat = new Chat(this.#t);
    this.completions = new Completions(this.#t);
    this.responses = new Responses(this.#t);
    this.models = new Models(this.#t);
    this.deployments = new Deployments(this.#t);
    this.networks = new Networks(this.#t);
    this.telemetry = new TelemetryResource(this.#t);
  }

  /** The server root the client calls, without /v1. */
  get baseURL(): string {
    return this.#t.baseURL;
  }

  get apiKey(): string | undefined {
    return this.#t.apiKey;
  }

  get timeout(): number {
    return this.#t.timeout;
  }

  get maxRetries(): number {
    return this.#t.maxRetries;
  }

  /** A new client with these options over this one's. */
  withOptions(options: ClientOptions): Neuro {
    return new Neuro({ ...this.#options, baseURL: this.baseURL, apiKey: this.apiKey, ...options });
  }

  /**
   * Asks whether the server can serve (GET /health, no key needed). A
   * server that cannot answers 503, which is returned, not thrown: its
   * status is `unavailable` and its reason says why.
   */
  health(options?: RequestOptions): Promise<Health> {
    return this.#t.json({ method: 'GET', path: '/health', options, accept: 503 });
  }

  /** The server's Prometheus metrics, as text (GET /metrics; a NotFoundError where the server serves none). */
  metrics(options?: RequestOptions): Promise<string> {
    return this.#t.text({ method: 'GET', path: '/metrics', options });
  }
}
