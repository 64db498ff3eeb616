import { base64 } from '../base64.js';
import { APITimeoutError } from '../errors.js';
import { segment, sleep } from '../core.js';
import { ListPromise } from '../list.js';
/**
 * Returns an event sample in compact form, for large batches of spikes.
 * Steps and inputs must be whole numbers that fit in an int32.
 */
export function packEvents(events, timesteps) {
    const view = new DataView(new ArrayBuffer(8 * events.length));
    for (let k = 0; k < events.length; k++) {
        const [t, i] = events[k];
        for (const [v, at] of [[t, 8 * k], [i, 8 * k + 4]]) {
            if (!Number.isInteger(v) || v < -0x80000000 || v > 0x7fffffff) {
                throw new RangeError(`packEvents: event ${k} holds ${v}, not a whole number that fits in an int32`);
            }
            view.setInt32(at, v, true);
        }
    }
    return { events_packed: base64(new Uint8Array(view.buffer)), timesteps };
}
/**
 * Returns an event sample as a raster of bits for a network of `inputs`
 * inputs: ⌈timesteps·inputs/8⌉ bytes whatever the activity, smaller than
 * `packEvents` where more than about one input in 64 fires, as with
 * rate-coded images. Each event must lie within `0 <= t < timesteps` and
 * `0 <= i < inputs`, else a RangeError before anything is sent.
 */
export function packRaster(events, timesteps, inputs) {
    if (!Number.isSafeInteger(timesteps) || !Number.isSafeInteger(inputs) || timesteps < 1 || inputs < 1 || timesteps * inputs > 8 * 0x7fffffff) {
        throw new RangeError(`packRaster: a raster of ${timesteps} timesteps of ${inputs} inputs`);
    }
    const bits = new Uint8Array(Math.ceil((timesteps * inputs) / 8));
    for (let k = 0; k < events.length; k++) {
        const [t, i] = events[k];
        if (!Number.isInteger(t) || !Number.isInteger(i) || t < 0 || t >= timesteps || i < 0 || i >= inputs) {
            throw new RangeError(`packRaster: event ${k}, [${t}, ${i}], is outside ${timesteps} timesteps of ${inputs} inputs`);
        }
        const bit = t * inputs + i;
        bits[Math.floor(bit / 8)] |= 1 << (bit % 8);
    }
    return { raster: base64(bits), timesteps };
}
export class Deployments {
    #t;
    constructor(transport) {
        this.#t = transport;
    }
    /** Lists the server's deployments and the caller's own. */
    list(options) {
        return new ListPromise(this.#t.json({ method: 'GET', path: '/v1/deployments', options }));
    }
    /** Describes one deployment, with its current load. */
    retrieve(id, options) {
        return this.#t.json({ method: 'GET', path: `/v1/deployments/${segment(id)}`, options });
    }
    /**
     * Places a model on a device. A network that does not fit the device is
     * an UnprocessableEntityError; the answer may still be `loading`, unless
     * `wait` is set.
     */
    async create(params, options) {
        const { wait, ...body } = params;
        const d = await this.#t.json({ method: 'POST', path: '/v1/deployments', body, options });
        if (!wait || d.status !== 'loading')
            return d;
        return this.wait(d.id, wait === true ? {} : wait, options);
    }
    /** Polls a deployment until it is no longer loading; it returns it ready or failed. */
    async wait(id, wait = {}, options) {
        const timeout = wait.timeout ?? 300_000;
        const deadline = Date.now() + timeout;
        for (let delay = wait.interval ?? 250;; delay = Math.min(delay * 1.5, 2000)) {
            const d = await this.retrieve(id, options);
            if (d.status !== 'loading')
                return d;
            if (Date.now() + delay > deadline)
                throw new APITimeoutError(`deployment ${id} is still loading after ${timeout} ms`);
            await sleep(delay, options?.signal);
        }
    }
    /** Deletes one of the caller's deployments; requests already running on it finish. */
    delete(id, options) {
        return this.#t.json({ method: 'DELETE', path: `/v1/deployments/${segment(id)}`, options });
    }
    /** Runs samples through a deployment of a network (a language model's is a BadRequestError, not_a_network). */
    run(id, params, options) {
        const body = params.inputs.some(typed) ? { ...params, inputs: params.inputs.map(plain) } : params;
        return this.#t.json({ method: 'POST', path: `/v1/deployments/${segment(id)}/run`, body, options });
    }
}
// JSON.stringify writes a typed array as an object: samples that hold one become arrays.
function typed(x) {
    return ArrayBuffer.isView(x) || (Array.isArray(x) && x.length > 0 && ArrayBuffer.isView(x[0]));
}
function plain(x) {
    if (ArrayBuffer.isView(x))
        return Array.from(x);
    if (Array.isArray(x) && x.length > 0 && ArrayBuffer.isView(x[0]))
        return x.map((r) => Array.from(r));
    return x;
}
