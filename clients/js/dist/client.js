import { Transport } from './core.js';
import { Chat } from './resources/chat.js';
import { Completions } from './resources/completions.js';
import { Deployments } from './resources/deployments.js';
import { Models } from './resources/models.js';
import { Networks } from './resources/networks.js';
import { Responses } from './resources/responses.js';
import { TelemetryResource } from './resources/telemetry.js';
/**
 * A client of one Neuro server. Its resources follow the REST API:
 *
 *     const client = new Neuro({ baseURL: 'http://127.0.0.1:8080', apiKey });
 *     const r = await client.chat.completions.create({ model: 'neuro-1-lite', messages, max_tokens: 32 });
 *
 * It holds no connection of its own (fetch pools them) and is safe to share.
 */
export class Neuro {
    chat;
    completions;
    responses;
    models;
    deployments;
    networks;
    telemetry;
    #t;
    #options;
    constructor(options = {}) {
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
    get baseURL() {
        return this.#t.baseURL;
    }
    get apiKey() {
        return this.#t.apiKey;
    }
    get timeout() {
        return this.#t.timeout;
    }
    get maxRetries() {
        return this.#t.maxRetries;
    }
    /** A new client with these options over this one's. */
    withOptions(options) {
        return new Neuro({ ...this.#options, baseURL: this.baseURL, apiKey: this.apiKey, ...options });
    }
    /**
     * Asks whether the server can serve (GET /health, no key needed). A
     * server that cannot answers 503, which is returned, not thrown: its
     * status is `unavailable` and its reason says why.
     */
    health(options) {
        return this.#t.json({ method: 'GET', path: '/health', options, accept: 503 });
    }
    /** The server's Prometheus metrics, as text (GET /metrics; a NotFoundError where the server serves none). */
    metrics(options) {
        return this.#t.text({ method: 'GET', path: '/metrics', options });
    }
}
