import { base64, bytesOf } from '../base64.js';
export class Networks {
    #t;
    constructor(transport) {
        this.#t = transport;
    }
    /**
     * Compiles a spiking network (POST /v1/compile; the file travels
     * base64-encoded). The network is stored and listed among the caller's
     * models; deploy it with deployments.create({model: net.id}). A file that
     * parses but holds something unsupported, or does not fit the target, is
     * an UnprocessableEntityError naming the node.
     */
    async compile(params, options) {
        const bytes = await bytesOf(params.file);
        const body = {
            model_format: params.format,
            model_file: base64(bytes),
            name: params.name,
            target: params.target,
            options: params.options,
        };
        return this.#t.json({ method: 'POST', path: '/v1/compile', body, options });
    }
}
