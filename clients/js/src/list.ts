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
export class ListPromise<T> implements PromiseLike<List<T>>, AsyncIterable<T> {
  readonly #list: Promise<List<T>>;

  constructor(list: Promise<List<T>>) {
    this.#list = list;
  }

  then<A = List<T>, B = never>(
    onfulfilled?: ((value: List<T>) => A | PromiseLike<A>) | null,
    onrejected?: ((reason: unknown) => B | PromiseLike<B>) | null,
  ): Promise<A | B> {
    return this.#list.then(onfulfilled, onrejected);
  }

  catch<B = never>(onrejected?: ((reason: unknown) => B | PromiseLike<B>) | null): Promise<List<T> | B> {
    return this.#list.catch(onrejected);
  }

  finally(onfinally?: (() => void) | null): Promise<List<T>> {
    return this.#list.finally(onfinally);
  }

  async *[Symbol.asyncIterator](): AsyncIterator<T> {
    yield* (await this.#list).data;
  }
}
