import { type ClientOptions, type RequestOptions } from './core.js';
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
    deployments: Array<{
        id: string;
        status: string;
    }>;
    reason?: string;
    error?: ErrorObject;
    /** In a cluster: this node, and the cluster's nodes. */
    node?: string;
    nodes?: Array<{
        name: string;
        up: boolean;
        self?: boolean;
    }>;
}
/**
 * A client of one Neuro server. Its resources follow the REST API:
 *
 *     const client = new Neuro({ baseURL: 'http://127.0.0.1:8080', apiKey });
 *     const r = await client.chat.completions.create({ model: 'neuro-1-lite', messages, max_tokens: 32 });
 *
 * It holds no connection of its own (fetch pools them) and is safe to share.
 */
export declare class Neuro {
    #private;
    readonly chat: Chat;
    readonly completions: Completions;
    readonly responses: Responses;
    readonly models: Models;
    readonly deployments: Deployments;
    readonly networks: Networks;
    readonly telemetry: TelemetryResource;
    constructor(options?: ClientOptions);
    /** The server root the client calls, without /v1. */
    get baseURL(): string;
    get apiKey(): string | undefined;
    get timeout(): number;
    get maxRetries(): number;
    /** A new client with these options over this one's. */
    withOptions(options: ClientOptions): Neuro;
    /**
     * Asks whether the server can serve (GET /health, no key needed). A
     * server that cannot answers 503, which is returned, not thrown: its
     * status is `unavailable` and its reason says why.
     */
    health(options?: RequestOptions): Promise<Health>;
    /** The server's Prometheus metrics, as text (GET /metrics; a NotFoundError where the server serves none). */
    metrics(options?: RequestOptions): Promise<string>;
}
