// Package lima teaches compile/pytorch the architecture of the neuro-1
// language models, so that their state_dicts import with no description.
// A blank import is enough:
//
//	import _ "github.com/neuro-go/neuro/models/lima"
//
// after which compile.Import("pytorch", ...) recognises a lima state_dict by
// its keys and builds its spiking graph. Package models imports it, so
// every program that links the built-in models reads their .pt files.
//
// # Overview
//
// lima (models/train/arch.py) is a tied token embedding, blocks of
// leaky-integrator token mixing and a spiking MLP that both add to a
// residual current, and a tied readout. Its state_dict names every tensor
// it needs:
//
//	embed.weight              (V, d)  the embedding; the readout's weight too
//	head_bias                 (V)
//	head_scale                ()      optional: the readout's weight is head_scale × embed.weight
//	blocks.{i}.mix_in.weight  (k, d)
//	blocks.{i}.mix_p          (k)     σ(mix_p) is the LI's decay per step
//	blocks.{i}.mix_out.weight (d, k)
//	blocks.{i}.fc1.weight     (h, d), blocks.{i}.fc1.bias (h)
//	blocks.{i}.fc2.weight     (d, h)
//	blocks.{i}.spk_p          (h)     optional: the hidden neurons are LIF, σ(spk_p) each one's decay per step
//	blocks.{i}.tern           ()      optional, the value 1: each hidden neuron has a mirror on the negated current
//	blocks.{i}.adapt_p        (h), blocks.{i}.adapt_w (h)
//	                                  optional, both or neither, with spk_p: each neuron's spikes back into itself
//	blocks.{i}.shift_in.weight  (j, d), blocks.{i}.shift_out.weight (d, j)
//	                                  optional, both or neither: j shift channels
//	blocks.{i}.shift2_in.weight (j, d), blocks.{i}.shift2_out.weight (d, j)
//	                                  optional, both or neither: j channels two tokens back
//	blocks.{i}.rec_in.weight    (r, h), blocks.{i}.rec_out.weight   (d, r)
//	                                  optional, both or neither: r channels of the block's own spikes
//
// Without spk_p a block's hidden neurons are stateless Threshold nodes
// (fc1's bias carries each one's threshold); with it they are LIF nodes
// with threshold 1 and a subtractive reset, keeping their membrane from
// token to token. adapt_p and adapt_w give each LIF neuron a leaky
// integrator of its own spikes (decay σ(adapt_p) per step) whose value
// joins the neuron's input one step later with weight adapt_w: negative,
// the neuron adapts (fires less for a while after firing); positive, it
// keeps firing. The graph is a cycle spk → adapt_in (Scale 1) → adapt
// (LI) → adapt_out (Scale adapt_w) → spk. tern gives each hidden neuron
// a mirror, spk_neg, of the same kind and time constant, that reads the
// negation of fc1's current and whose spikes fc2 reads negated: a unit
// that says +1, 0 or −1 on each token with the weights of one neuron.
// Each mirror keeps a membrane of its own. Shift channels add the previous token's residual current,
// projected to j channels, delayed one step (an snn.Delay node) and
// projected back, to the current that feeds the hidden neurons: the LI
// channels' exponential averages cannot single out the last token.
// shift2 channels do the same for the token before it, through a Delay
// of two steps. rec channels carry the block's own spikes of the previous
// token, projected to r channels and back, into the same current, so that
// what a block fired on one token shapes what it and the blocks after it
// see on the next: through a Delay of one step into the block's output,
// and through a cycle back into its hidden neurons, which the simulator
// closes with its step of delay.
//
// The package is an example of pytorch.Architecture as much as a part of
// the product: it reads its tensors only through pytorch.StateDict, as a
// user's architecture would, and so inherits the importer's byte budget and
// its refusal of NaN and infinite weights.
//
// # Invariants
//
//   - A state_dict is lima's when it has embed.weight, head_bias and
//     blocks.0.mix_p; once claimed, any other key, a missing block or
//     tensor, or a shape that disagrees with the others is a
//     *compile.UnsupportedError naming the key.
//   - One timestep per token; the token's logits leave in the step it
//     enters. The graph is feed-forward but for rec channels and
//     adaptation, whose cycles are delayed on their edges back into
//     b{i}.spk and nowhere else.
package lima
