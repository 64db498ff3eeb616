import { segment } from '../core.js';
/** The events after which a response's stream ends (it has no [DONE]). */
const endEvents = new Set(['response.completed', 'response.incomplete', 'response.failed']);
export class Responses {
    #t;
    constructor(transport) {
        this.#t = transport;
    }
    create(body, options) {
        const call = { method: 'POST', path: '/v1/responses', body, options };
        return body.stream ? this.#t.stream(call, endEvents) : this.#t.json(call);
    }
    /** A stored response; an unknown, expired, unstored or another key's one is a NotFoundError (response_not_found). */
    retrieve(id, options) {
        return this.#t.json({ method: 'GET', path: `/v1/responses/${segment(id)}`, options });
    }
    /** Deletes a stored response. */
    delete(id, options) {
        return this.#t.json({ method: 'DELETE', path: `/v1/responses/${segment(id)}`, options });
    }
}
