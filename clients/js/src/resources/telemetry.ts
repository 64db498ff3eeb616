import type { RequestOptions, Transport } from '../core.js';

export interface TelemetryParams {
  /** A duration such as `90s`, `5m` or `1h`; default everything since the server started. */
  window?: string;
  model?: string;
  deployment?: string;
}

/** Milliseconds. */
export interface Percentiles {
  p50: number;
  p95: number;
  p99: number;
  mean: number;
}

export interface TelemetryGroup {
  requests: { total: number; errors: number; by_endpoint: Record<string, number> };
  latency_ms: Percentiles;
  /** per_second: completion tokens per second spent generating them. */
  tokens: { prompt: number; completion: number; per_second: number };
  neuromorphic: {
    timesteps: number;
    spikes: number;
    synaptic_ops: number;
    /** Spikes per update of a neuron that can fire. */
    spike_rate: number;
    energy_estimate_uj: number;
  };
}

/** The caller's own requests. */
export interface Telemetry extends TelemetryGroup {
  object: 'telemetry';
  /** Unix seconds. */
  window: { start: number; end: number };
  time_to_first_token_ms: Percentiles;
  by_model: Record<string, TelemetryGroup>;
  by_deployment: Record<string, TelemetryGroup>;
  /** Set when the window reaches past the oldest record the server keeps. */
  truncated?: boolean;
  /** In a cluster: its nodes, so that one that is down is seen. */
  nodes?: Array<{ name: string; up: boolean; self?: boolean }>;
}

export class TelemetryResource {
  readonly #t: Transport;

  constructor(transport: Transport) {
    this.#t = transport;
  }

  /** Reports the caller's own requests: latency, tokens, spikes and energy, by model and deployment. */
  retrieve(params: TelemetryParams = {}, options?: RequestOptions): Promise<Telemetry> {
    const { window, model, deployment } = params;
    return this.#t.json({ method: 'GET', path: '/v1/telemetry', query: { window, model, deployment }, options });
  }
}
