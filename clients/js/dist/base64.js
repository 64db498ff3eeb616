const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
const codes = Uint8Array.from(alphabet, (c) => c.charCodeAt(0));
const pad = 61; // '='
/** Encodes bytes in standard base64 with padding (RFC 4648 section 4), in browsers and Node alike. */
export function base64(bytes) {
    const out = new Uint8Array(Math.ceil(bytes.length / 3) * 4);
    let i = 0;
    let j = 0;
    for (; i + 2 < bytes.length; i += 3) {
        const n = (bytes[i] << 16) | (bytes[i + 1] << 8) | bytes[i + 2];
        out[j++] = codes[n >> 18];
        out[j++] = codes[(n >> 12) & 63];
        out[j++] = codes[(n >> 6) & 63];
        out[j++] = codes[n & 63];
    }
    const rest = bytes.length - i;
    if (rest > 0) {
        const n = (bytes[i] << 16) | (rest === 2 ? bytes[i + 1] << 8 : 0);
        out[j++] = codes[n >> 18];
        out[j++] = codes[(n >> 12) & 63];
        out[j++] = rest === 2 ? codes[(n >> 6) & 63] : pad;
        out[j++] = pad;
    }
    return new TextDecoder().decode(out); // the output is ASCII
}
/** The bytes of a file given as a Uint8Array (a Node Buffer is one), another typed array or DataView, an ArrayBuffer or a Blob. */
export async function bytesOf(file) {
    if (file instanceof Uint8Array)
        return file;
    if (file instanceof ArrayBuffer)
        return new Uint8Array(file);
    if (ArrayBuffer.isView(file))
        return new Uint8Array(file.buffer, file.byteOffset, file.byteLength);
    if (typeof Blob !== 'undefined' && file instanceof Blob)
        return new Uint8Array(await file.arrayBuffer());
    throw new TypeError('neuro: file must be a Uint8Array, an ArrayBuffer, a typed array or a Blob');
}
