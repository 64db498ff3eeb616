export class Completions {
    #t;
    constructor(transport) {
        this.#t = transport;
    }
    create(body, options) {
        const call = { method: 'POST', path: '/v1/completions', body, options };
        return body.stream ? this.#t.stream(call) : this.#t.json(call);
    }
}
