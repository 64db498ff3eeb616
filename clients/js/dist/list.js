/**
 * ListPromise is the answer of a list call. Awaited, it is the List;
 * iterated with `for await`, it yields the items, as the OpenAI client's
 * pages do:
 *
 *     const { data } = await client.models.list();
 *     for await (const model of client.models.list()) { ... }
 */
export class ListPromise {
    #list;
    constructor(list) {
        this.#list = list;
    }
    then(onfulfilled, onrejected) {
        return this.#list.then(onfulfilled, onrejected);
    }
    catch(onrejected) {
        return this.#list.catch(onrejected);
    }
    finally(onfinally) {
        return this.#list.finally(onfinally);
    }
    async *[Symbol.asyncIterator]() {
        yield* (await this.#list).data;
    }
}
