import { base64, bytesOf } from '../base64.js';
import type { RequestOptions, Transport } from '../core.js';

/** A layer of a state_dict that does not describe itself (plain nn.Sequential, Norse, SpikingJelly). */
export interface LayerSpec {
  /** The key prefix in the state_dict, such as `0` or `fc1`. */
  name: string;
  /** `linear`, `conv2d`, `relu`, `flatten`, ..., or a neuron: `lif`, `snntorch.leaky`, `norse.lif`, `norse.li`, ... */
  kind: string;
  params?: Record<string, number>;
  /** The input shape per sample of the first layer, when needed. */
  shape?: number[];
}

export interface CompileOptions {
  /** 0-16; 0 is the target's. */
  weight_bits?: number;
  /** 1-4096. */
  timesteps?: number;
  /** 50-100. */
  percentile?: number;
  calibration?: { samples?: number[][]; percentile?: number };
  /** The time step in seconds the graph is built for (Norse's, for instance). */
  dt?: number;
  layers?: LayerSpec[];
  /** Sequences of input vectors on which graded values are calibrated. */
  ranges?: number[][][];
  [option: string]: unknown;
}

export type ModelFormat = 'pytorch' | 'torchscript' | 'onnx' | 'nir';

export interface CompileParams {
  /** The model file: a Uint8Array (a Node Buffer is one), an ArrayBuffer, a typed array or a Blob (a browser's File). */
  file: Uint8Array | ArrayBuffer | ArrayBufferView | Blob;
  format: ModelFormat;
  name?: string;
  /** A device name; default the CPU simulator. */
  target?: string;
  options?: CompileOptions;
}

export interface CompiledNetwork {
  id: string;
  object: 'compiled_network';
  created: number;
  name: string;
  status: 'succeeded';
  source: { format: string; bytes: number; sha256: string };
  network: { inputs: number; outputs: number; layers: number; neurons: number; synapses: number; parameters: number };
  target: { device: string; cores_used: number; utilisation: number; fits: boolean };
  /** Per timestep (and sample), from the target's cost model; basis says where the activity figures come from. */
  estimates: {
    energy_per_timestep_nj: number;
    latency_per_timestep_us: number;
    basis?: string;
    neuron_updates?: number;
    spikes?: number;
    synaptic_ops?: number;
  };
  warnings: string[] | null;
  owned_by: string;
}

export class Networks {
  readonly #t: Transport;

  constructor(transport: Transport) {
    this.#t = transport;
  }

  /**
   * Compiles a spiking network (POST /v1/compile; the file travels
   * base64-encoded). The network is stored and listed among the caller's
   * models; deploy it with deployments.create({model: net.id}). A file that
   * parses but holds something unsupported, or does not fit the target, is
   * an UnprocessableEntityError naming the node.
   */
  async compile(params: CompileParams, options?: RequestOptions): Promise<CompiledNetwork> {
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
