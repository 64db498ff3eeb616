/** Encodes bytes in standard base64 with padding (RFC 4648 section 4), in browsers and Node alike. */
export declare function base64(bytes: Uint8Array): string;
/** The bytes of a file given as a Uint8Array (a Node Buffer is one), another typed array or DataView, an ArrayBuffer or a Blob. */
export declare function bytesOf(file: Uint8Array | ArrayBuffer | ArrayBufferView | Blob): Promise<Uint8Array>;
