import { segment } from '../core.js';
export class Chat {
    completions;
    constructor(transport) {
        this.completions = new ChatCompletions(transport);
    }
}
export class ChatCompletions {
    #t;
    constructor(transport) {
        this.#t = transport;
    }
    create(body, options) {
        let path = '/v1/chat/completions';
        if (body.deployment !== undefined) {
            const { deployment, ...rest } = body;
            path = `/v1/deployments/${segment(deployment)}/chat/completions`;
            body = rest;
        }
        const call = { method: 'POST', path, body, options };
        return body.stream ? this.#t.stream(call) : this.#t.json(call);
    }
}
