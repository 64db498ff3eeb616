import { segment } from '../core.js';
import { ListPromise } from '../list.js';
export class Models {
    #t;
    constructor(transport) {
        this.#t = transport;
    }
    /** Lists the built-in models and the networks the caller compiled. */
    list(options) {
        return new ListPromise(this.#t.json({ method: 'GET', path: '/v1/models', options }));
    }
    /** Describes one model; `neuro-1` answers as `neuro-1-standard`. */
    retrieve(id, options) {
        return this.#t.json({ method: 'GET', path: `/v1/models/${segment(id)}`, options });
    }
    /** Deletes a network the caller compiled (ConflictError while a deployment uses it). */
    delete(id, options) {
        return this.#t.json({ method: 'DELETE', path: `/v1/models/${segment(id)}`, options });
    }
}
