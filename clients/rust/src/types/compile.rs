use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// The format of an uploaded network file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Format {
    /// A `torch.save` file: a state_dict (snnTorch, Norse, a plain
    /// `nn.Sequential` with [`CompileOptions::layers`]) or a pickled module.
    PyTorch,
    /// A `torch.jit.save` file (read as PyTorch).
    TorchScript,
    Onnx,
    /// The Neuromorphic Intermediate Representation.
    Nir,
}

impl Format {
    /// The `model_format` the server takes.
    pub fn as_str(self) -> &'static str {
        match self {
            Format::PyTorch => "pytorch",
            Format::TorchScript => "torchscript",
            Format::Onnx => "onnx",
            Format::Nir => "nir",
        }
    }
}

/// The optional parts of a compile: the network's name, its target, and
/// the compiler's options. Options left None take the compiler's defaults.
///
/// ```
/// use neuro_client::{CompileOptions, LayerSpec};
/// let opts = CompileOptions::new()
///     .name("norse-lif")
///     .layers(vec![LayerSpec::new("0", "linear"), LayerSpec::new("1", "norse.lif").param("tau_mem_inv", 100.0)])
///     .dt(1e-3);
/// ```
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct CompileOptions {
    /// Names the network; default the server's choice.
    #[serde(skip)]
    pub name: Option<String>,
    /// The device to compile for; default the CPU simulator.
    #[serde(skip)]
    pub target: Option<String>,
    /// 0..16, 0 is the target's.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub weight_bits: Option<u32>,
    /// 1..4096 per sample.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timesteps: Option<u32>,
    /// 50..100, for ANN-to-SNN conversion.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub percentile: Option<f64>,
    /// The time step in seconds the graph is built for (Norse's, say).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dt: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub calibration: Option<Calibration>,
    /// Sequences of input vectors on which graded values are calibrated.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ranges: Option<Vec<Vec<Vec<f32>>>>,
    /// What each layer of a state_dict is, for those that do not describe
    /// themselves (plain `nn.Sequential`, Norse, SpikingJelly).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub layers: Option<Vec<LayerSpec>>,
    /// Options this version of the client does not name, passed as they are.
    #[serde(flatten)]
    pub extra: serde_json::Map<String, serde_json::Value>,
}

impl CompileOptions {
    /// No option set: the compiler's defaults.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets `name`.
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }

    /// Sets `target`.
    pub fn target(mut self, device: impl Into<String>) -> Self {
        self.target = Some(device.into());
        self
    }

    /// Sets `weight_bits`.
    pub fn weight_bits(mut self, bits: u32) -> Self {
        self.weight_bits = Some(bits);
        self
    }

    /// Sets `timesteps`.
    pub fn timesteps(mut self, n: u32) -> Self {
        self.timesteps = Some(n);
        self
    }

    /// Sets `percentile`.
    pub fn percentile(mut self, p: f64) -> Self {
        self.percentile = Some(p);
        self
    }

    /// Sets `dt`.
    pub fn dt(mut self, seconds: f64) -> Self {
        self.dt = Some(seconds);
        self
    }

    /// Sets `calibration`.
    pub fn calibration(mut self, c: Calibration) -> Self {
        self.calibration = Some(c);
        self
    }

    /// Sets `ranges`.
    pub fn ranges(mut self, sequences: Vec<Vec<Vec<f32>>>) -> Self {
        self.ranges = Some(sequences);
        self
    }

    /// Sets `layers`.
    pub fn layers(mut self, layers: Vec<LayerSpec>) -> Self {
        self.layers = Some(layers);
        self
    }

    /// Sets an option by name, for options the fields above do not cover.
    pub fn option(mut self, key: impl Into<String>, value: impl Into<serde_json::Value>) -> Self {
        self.extra.insert(key.into(), value.into());
        self
    }

    /// Whether any compiler option is set (name and target aside).
    pub(crate) fn has_options(&self) -> bool {
        self.weight_bits.is_some()
            || self.timesteps.is_some()
            || self.percentile.is_some()
            || self.dt.is_some()
            || self.calibration.is_some()
            || self.ranges.is_some()
            || self.layers.is_some()
            || !self.extra.is_empty()
    }
}

/// Samples on which an ANN's activations are measured for conversion.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Calibration {
    pub samples: Vec<Vec<f32>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub percentile: Option<f64>,
}

/// What one layer of a state_dict is: `name` is its key prefix ("0",
/// "fc1"), `kind` such as `linear`, `relu`, `lif`, `snntorch.leaky`,
/// `norse.lif`.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct LayerSpec {
    pub name: String,
    pub kind: String,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub params: BTreeMap<String, f64>,
    /// The input shape per sample of the first layer, when needed.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub shape: Vec<u32>,
}

impl LayerSpec {
    /// A layer without params or shape.
    pub fn new(name: impl Into<String>, kind: impl Into<String>) -> Self {
        LayerSpec { name: name.into(), kind: kind.into(), ..Default::default() }
    }

    /// Adds a parameter of the layer (`tau_mem_inv`, `v_th`, ...).
    pub fn param(mut self, key: impl Into<String>, value: f64) -> Self {
        self.params.insert(key.into(), value);
        self
    }

    /// Sets `shape`.
    pub fn shape(mut self, shape: Vec<u32>) -> Self {
        self.shape = shape;
        self
    }
}

/// A compiled network, stored by the server and listed among the
/// caller's models.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct CompiledNetwork {
    /// `net-…`: the model id to deploy.
    pub id: String,
    pub object: String,
    pub created: i64,
    pub name: String,
    pub status: String,
    pub source: Source,
    pub network: NetworkReport,
    pub target: TargetReport,
    #[serde(default)]
    pub estimates: Estimates,
    #[serde(default)]
    pub warnings: Vec<String>,
    #[serde(default)]
    pub owned_by: String,
}

/// The uploaded file.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
pub struct Source {
    pub format: String,
    pub bytes: u64,
    pub sha256: String,
}

/// What a compiled network holds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
pub struct NetworkReport {
    pub inputs: u64,
    pub outputs: u64,
    pub layers: u64,
    pub neurons: u64,
    pub synapses: u64,
    pub parameters: u64,
}

/// How a compiled network sits on its target.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct TargetReport {
    pub device: String,
    pub cores_used: u64,
    pub utilisation: f64,
    pub fits: bool,
}

/// The target's cost model, per timestep (and sample).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct Estimates {
    #[serde(default)]
    pub energy_per_timestep_nj: f64,
    #[serde(default)]
    pub latency_per_timestep_us: f64,
    /// Where the activity figures come from.
    #[serde(default)]
    pub basis: String,
    #[serde(default)]
    pub neuron_updates: f64,
    #[serde(default)]
    pub spikes: f64,
    #[serde(default)]
    pub synaptic_ops: f64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_body() {
        let o = CompileOptions::new()
            .name("n")
            .layers(vec![LayerSpec::new("0", "linear"), LayerSpec::new("1", "norse.lif").param("v_th", 0.6)])
            .dt(0.001)
            .option("future", true);
        assert!(o.has_options() && !CompileOptions::new().name("n").target("loihi").has_options());
        let v = serde_json::to_value(&o).unwrap();
        assert_eq!(
            v,
            serde_json::json!({"dt":0.001,"layers":[{"name":"0","kind":"linear"},{"name":"1","kind":"norse.lif","params":{"v_th":0.6}}],"future":true})
        );
    }
}
