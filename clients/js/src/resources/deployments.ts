import { base64 } from '../base64.js';
import { APITimeoutError } from '../errors.js';
import { segment, sleep, type RequestOptions, type Transport } from '../core.js';
import { ListPromise, type List } from '../list.js';
import type { Deleted } from './shared.js';

export type DeploymentStatus = 'ready' | 'loading' | 'failed';

/** A model placed on a device. */
export interface Deployment {
  id: string;
  object: 'deployment';
  model: string;
  /** kind: `cpu`, `emulator` or `hardware`; model names the simulator's precision on cpu ("int8 simulator"). */
  device: { name: string; kind: string; vendor?: string; model?: string };
  status: DeploymentStatus;
  created: number;
  replicas: number;
  max_batch_size: number;
  /** The sequences (or samples) in its slots, and those waiting for one. */
  load: { active: number; queued: number };
  /** Why it failed, when status is `failed`. */
  failure?: string;
  /** `system` for the server's own. */
  owned_by: string;
  /** In a cluster: the node that runs it. */
  node?: string;
}

/** How create waits for a deployment to load. */
export interface WaitOptions {
  /** Milliseconds to wait in all. Default 300000. */
  timeout?: number;
  /** Milliseconds between the first polls; it grows to 2 s. Default 250. */
  interval?: number;
}

export interface DeploymentCreateParams {
  /** A built-in model id (or alias), or one of the caller's compiled networks (`net-...`). */
  model: string;
  /** A registered device: `cpu` (the default), `loihi`, `xylo`. */
  device?: string;
  /** 1-64 of [A-Za-z0-9._-]; default `dep-` and 24 random characters. A taken id is a ConflictError. */
  id?: string;
  replicas?: number;
  max_batch_size?: number;
  /** The cpu simulator's weight precision: `float32` (default, exact), `bfloat16` or `int8`. */
  precision?: 'float32' | 'bfloat16' | 'int8';
  /** In a cluster: the node to place it on. */
  node?: string;
  /**
   * Client-side: poll until the deployment is no longer `loading` (the
   * server itself waits up to 10 s before answering). A deployment that
   * failed is returned with status `failed`; one still loading at the
   * timeout is an APITimeoutError.
   */
  wait?: boolean | WaitOptions;
}

/** Sparse input: `[t, i]` is input neuron i spiking at step t. */
export interface EventSample {
  events: Array<[number, number]>;
  timesteps: number;
}

/**
 * Events in compact form: little-endian int32 pairs (t, i) in base64,
 * a quarter of the JSON's size. `packEvents` writes it.
 */
export interface PackedEventSample {
  events_packed: string;
  timesteps: number;
}

/**
 * Returns an event sample in compact form, for large batches of spikes.
 * Steps and inputs must be whole numbers that fit in an int32.
 */
export function packEvents(events: ArrayLike<readonly [number, number]>, timesteps: number): PackedEventSample {
  const view = new DataView(new ArrayBuffer(8 * events.length));
  for (let k = 0; k < events.length; k++) {
    const [t, i] = events[k]!;
    for (const [v, at] of [[t, 8 * k], [i, 8 * k + 4]] as const) {
      if (!Number.isInteger(v) || v < -0x80000000 || v > 0x7fffffff) {
        throw new RangeError(`packEvents: event ${k} holds ${v}, not a whole number that fits in an int32`);
      }
      view.setInt32(at, v, true);
    }
  }
  return { events_packed: base64(new Uint8Array(view.buffer)), timesteps };
}

/**
 * Events as a raster of bits in standard base64: a row of the network's
 * n inputs per step, input i firing at step t where bit t·n+i is set,
 * least significant bit of each byte first (numpy's `packbits(spikes,
 * bitorder="little")` of a C-ordered T×n array). `packRaster` writes it.
 */
export interface RasterSample {
  raster: string;
  timesteps: number;
}

/**
 * Returns an event sample as a raster of bits for a network of `inputs`
 * inputs: ⌈timesteps·inputs/8⌉ bytes whatever the activity, smaller than
 * `packEvents` where more than about one input in 64 fires, as with
 * rate-coded images. Each event must lie within `0 <= t < timesteps` and
 * `0 <= i < inputs`, else a RangeError before anything is sent.
 */
export function packRaster(events: ArrayLike<readonly [number, number]>, timesteps: number, inputs: number): RasterSample {
  if (!Number.isSafeInteger(timesteps) || !Number.isSafeInteger(inputs) || timesteps < 1 || inputs < 1 || timesteps * inputs > 8 * 0x7fffffff) {
    throw new RangeError(`packRaster: a raster of ${timesteps} timesteps of ${inputs} inputs`);
  }
  const bits = new Uint8Array(Math.ceil((timesteps * inputs) / 8));
  for (let k = 0; k < events.length; k++) {
    const [t, i] = events[k]!;
    if (!Number.isInteger(t) || !Number.isInteger(i) || t < 0 || t >= timesteps || i < 0 || i >= inputs) {
      throw new RangeError(`packRaster: event ${k}, [${t}, ${i}], is outside ${timesteps} timesteps of ${inputs} inputs`);
    }
    const bit = t * inputs + i;
    bits[Math.floor(bit / 8)]! |= 1 << (bit % 8);
  }
  return { raster: base64(bits), timesteps };
}

/**
 * One sample: a vector of the network's input size presented at every
 * step, a matrix with one row per step, or events (as pairs, packed, or
 * a raster). Typed arrays (Float32Array, ...) are accepted for vectors
 * and rows.
 */
export type RunSample = ArrayLike<number> | Array<ArrayLike<number>> | EventSample | PackedEventSample | RasterSample;

export interface RunParams {
  /** 1 to 256 samples; they run in parallel and give the same result alone or together. */
  inputs: RunSample[];
  /** Steps per sample; default the network's timesteps_per_sample, or the rows of a matrix. */
  timesteps?: number;
  /** `spikes`: the output layer's spikes as [t, i]; `membrane`: its membrane at every step (cpu only). */
  record?: Array<'spikes' | 'membrane'>;
  /** When given, must be the deployment's model. */
  model?: string;
  /** Seeds the spike-probability input encoding (sample k uses seed + k). */
  seed?: number;
}

export interface RunOutput {
  index: number;
  /** The output layer's spikes summed over the run; for a graded output layer (a leaky integrator readout), its final values. */
  spike_counts: number[];
  /** The argmax of spike_counts, the lowest index on ties. */
  prediction: number;
  /** The output layer's membrane after the last step (cpu), or its final outputs (chip emulators). */
  final_state: number[];
  spikes?: Array<[number, number]>;
  membrane?: number[][];
}

export interface Run {
  id: string;
  object: 'network.run';
  created: number;
  model: string;
  deployment: string;
  outputs: RunOutput[];
  /** device_ms: the chip's latency model on an emulator, measured simulator time on cpu. */
  usage: { samples: number; timesteps: number; spikes: number; synaptic_ops: number; energy_uj: number; device_ms: number };
  /** The quantisation of a chip emulator's run. */
  warnings: string[] | null;
}

export type DeploymentDeleted = Deleted<'deployment'>;

export class Deployments {
  readonly #t: Transport;

  constructor(transport: Transport) {
    this.#t = transport;
  }

  /** Lists the server's deployments and the caller's own. */
  list(options?: RequestOptions): ListPromise<Deployment> {
    return new ListPromise(this.#t.json<List<Deployment>>({ method: 'GET', path: '/v1/deployments', options }));
  }

  /** Describes one deployment, with its current load. */
  retrieve(id: string, options?: RequestOptions): Promise<Deployment> {
    return this.#t.json({ method: 'GET', path: `/v1/deployments/${segment(id)}`, options });
  }

  /**
   * Places a model on a device. A network that does not fit the device is
   * an UnprocessableEntityError; the answer may still be `loading`, unless
   * `wait` is set.
   */
  async create(params: DeploymentCreateParams, options?: RequestOptions): Promise<Deployment> {
    const { wait, ...body } = params;
    const d = await this.#t.json<Deployment>({ method: 'POST', path: '/v1/deployments', body, options });
    if (!wait || d.status !== 'loading') return d;
    return this.wait(d.id, wait === true ? {} : wait, options);
  }

  /** Polls a deployment until it is no longer loading; it returns it ready or failed. */
  async wait(id: string, wait: WaitOptions = {}, options?: RequestOptions): Promise<Deployment> {
    const timeout = wait.timeout ?? 300_000;
    const deadline = Date.now() + timeout;
    for (let delay = wait.interval ?? 250; ; delay = Math.min(delay * 1.5, 2000)) {
      const d = await this.retrieve(id, options);
      if (d.status !== 'loading') return d;
      if (Date.now() + delay > deadline) throw new APITimeoutError(`deployment ${id} is still loading after ${timeout} ms`);
      await sleep(delay, options?.signal);
    }
  }

  /** Deletes one of the caller's deployments; requests already running on it finish. */
  delete(id: string, options?: RequestOptions): Promise<DeploymentDeleted> {
    return this.#t.json({ method: 'DELETE', path: `/v1/deployments/${segment(id)}`, options });
  }

  /** Runs samples through a deployment of a network (a language model's is a BadRequestError, not_a_network). */
  run(id: string, params: RunParams, options?: RequestOptions): Promise<Run> {
    const body = params.inputs.some(typed) ? { ...params, inputs: params.inputs.map(plain) } : params;
    return this.#t.json({ method: 'POST', path: `/v1/deployments/${segment(id)}/run`, body, options });
  }
}

// JSON.stringify writes a typed array as an object: samples that hold one become arrays.
function typed(x: RunSample): boolean {
  return ArrayBuffer.isView(x) || (Array.isArray(x) && x.length > 0 && ArrayBuffer.isView(x[0]));
}

function plain(x: RunSample): RunSample {
  if (ArrayBuffer.isView(x)) return Array.from(x as ArrayLike<number>);
  if (Array.isArray(x) && x.length > 0 && ArrayBuffer.isView(x[0])) return (x as Array<ArrayLike<number>>).map((r) => Array.from(r));
  return x;
}
