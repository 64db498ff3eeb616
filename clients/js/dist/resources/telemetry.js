export class TelemetryResource {
    #t;
    constructor(transport) {
        this.#t = transport;
    }
    /** Reports the caller's own requests: latency, tokens, spikes and energy, by model and deployment. */
    retrieve(params = {}, options) {
        const { window, model, deployment } = params;
        return this.#t.json({ method: 'GET', path: '/v1/telemetry', query: { window, model, deployment }, options });
    }
}
