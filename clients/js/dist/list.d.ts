/** A list answer: `{object: "list", data: [...]}`. */
export interface List<T> {
    object: 'list';
    data: T[];
}
/**
 * ListPromise is the answer of a list call. Awaited, it is the List;
 * iterated with `for await`, it yields the items, as the OpenAI client's
 * pages do:
 *
 *     const { data } = await client.models.list();
 *     for await (const model of client.models.list()) { ... }
 */
export declare class ListPromise<T> implements PromiseLike<List<T>>, AsyncIterable<T> {
    #private;
    constructor(list: Promise<List<T>>);
    then<A = List<T>, B = never>(onfulfilled?: ((value: List<T>) => A | PromiseLike<A>) | null, onrejected?: ((reason: unknown) => B | PromiseLike<B>) | null): Promise<A | B>;
    catch<B = never>(onrejected?: ((reason: unknown) => B | PromiseLike<B>) | null): Promise<List<T> | B>;
    finally(onfinally?: (() => void) | null): Promise<List<T>>;
    [Symbol.asyncIterator](): AsyncIterator<T>;
}
