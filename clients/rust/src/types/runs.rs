use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// One sample of a run.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Sample {
    /// A vector of the network's input size, presented at every step
    /// through the network's input encoding.
    Vector(Vec<f32>),
    /// One row of input per timestep.
    Matrix(Vec<Vec<f32>>),
    /// Sparse input spikes.
    Events(EventSample),
    /// Sparse input spikes in compact form (`EventSample::pack`).
    Packed(PackedEventSample),
    /// Input spikes as a raster of bits (`EventSample::raster`).
    Raster(RasterSample),
}

impl From<Vec<f32>> for Sample {
    fn from(v: Vec<f32>) -> Self {
        Sample::Vector(v)
    }
}

impl From<&[f32]> for Sample {
    fn from(v: &[f32]) -> Self {
        Sample::Vector(v.to_vec())
    }
}

impl From<Vec<Vec<f32>>> for Sample {
    fn from(m: Vec<Vec<f32>>) -> Self {
        Sample::Matrix(m)
    }
}

impl From<EventSample> for Sample {
    fn from(e: EventSample) -> Self {
        Sample::Events(e)
    }
}

impl From<PackedEventSample> for Sample {
    fn from(p: PackedEventSample) -> Self {
        Sample::Packed(p)
    }
}

impl From<RasterSample> for Sample {
    fn from(r: RasterSample) -> Self {
        Sample::Raster(r)
    }
}

/// Input spikes: `[t, i]` is input neuron i spiking at step t.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EventSample {
    pub events: Vec<[u32; 2]>,
    pub timesteps: u32,
}

impl EventSample {
    /// The same spikes in compact form: little-endian int32 pairs (t, i)
    /// in base64, a quarter of the JSON's size, for large batches. Steps
    /// and inputs above `i32::MAX` are refused by the server either way.
    ///
    /// ```
    /// use neuro_client::EventSample;
    /// let p = EventSample { events: vec![[0, 1]], timesteps: 4 }.pack();
    /// assert_eq!(p.events_packed, "AAAAAAEAAAA=");
    /// ```
    pub fn pack(&self) -> PackedEventSample {
        let mut raw = Vec::with_capacity(8 * self.events.len());
        for [t, i] in &self.events {
            raw.extend_from_slice(&t.to_le_bytes());
            raw.extend_from_slice(&i.to_le_bytes());
        }
        let mut events_packed = String::new();
        crate::encode::base64_into(&mut events_packed, &raw);
        PackedEventSample { events_packed, timesteps: self.timesteps }
    }

    /// The same spikes as a raster of bits for a network of `inputs`
    /// inputs: ⌈timesteps·inputs/8⌉ bytes whatever the activity, smaller
    /// than [`pack`](EventSample::pack) where more than about one input in
    /// 64 fires, as with rate-coded images. Each event must lie within the
    /// sample's steps and the inputs, else [`Error::InvalidArgument`].
    ///
    /// ```
    /// use neuro_client::EventSample;
    /// let r = EventSample { events: vec![[0, 0], [0, 2], [1, 1], [2, 2]], timesteps: 3 }.raster(3)?;
    /// assert_eq!(r.raster, "FQE=");
    /// # Ok::<(), neuro_client::Error>(())
    /// ```
    pub fn raster(&self, inputs: usize) -> Result<RasterSample> {
        let steps = self.timesteps as usize;
        let bits = match steps.checked_mul(inputs) {
            Some(bits) if bits > 0 => bits,
            _ => return Err(Error::InvalidArgument(format!("a raster of {} timesteps of {inputs} inputs", self.timesteps))),
        };
        let mut raw = vec![0u8; (bits - 1) / 8 + 1];
        for (k, &[t, i]) in self.events.iter().enumerate() {
            let (t, i) = (t as usize, i as usize);
            if t >= steps || i >= inputs {
                return Err(Error::InvalidArgument(format!("event {k}, [{t}, {i}], is outside {steps} timesteps of {inputs} inputs")));
            }
            let bit = t * inputs + i;
            raw[bit / 8] |= 1 << (bit % 8);
        }
        let mut raster = String::new();
        crate::encode::base64_into(&mut raster, &raw);
        Ok(RasterSample { raster, timesteps: self.timesteps })
    }
}

/// Input spikes in compact form: `events_packed` is standard base64 of
/// little-endian int32 pairs (t, i), 8 bytes a spike.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PackedEventSample {
    pub events_packed: String,
    pub timesteps: u32,
}

/// Input spikes as a raster of bits: `raster` is standard base64 of a row
/// of the network's n inputs per step, input i firing at step t where bit
/// t·n+i is set, least significant bit of each byte first (numpy's
/// `packbits(spikes, bitorder="little")` of a C-ordered T×n array).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RasterSample {
    pub raster: String,
    pub timesteps: u32,
}

/// What a run records beside the spike counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Record {
    /// The output layer's spikes, as `[t, i]` pairs.
    Spikes,
    /// The output layer's membrane at every step (cpu only).
    Membrane,
}

/// The body of `POST /v1/deployments/{id}/run`.
///
/// ```
/// use neuro_client::{Record, RunRequest};
/// let req = RunRequest::new(vec![vec![0.5f32; 8]]).timesteps(100).record([Record::Spikes]);
/// ```
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct RunRequest {
    /// 1..256 samples; they run in parallel and give the same results
    /// alone or together.
    pub inputs: Vec<Sample>,
    /// Steps per vector sample; default the network's.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timesteps: Option<u32>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub record: Vec<Record>,
    /// When given, must be the deployment's model.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Seeds a probabilistic input encoding (sample k draws with seed + k).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seed: Option<i64>,
}

impl RunRequest {
    /// A run of these samples, with the network's defaults for the rest.
    pub fn new<S: Into<Sample>>(inputs: impl IntoIterator<Item = S>) -> Self {
        RunRequest { inputs: inputs.into_iter().map(Into::into).collect(), ..Default::default() }
    }

    /// Sets `timesteps`.
    pub fn timesteps(mut self, n: u32) -> Self {
        self.timesteps = Some(n);
        self
    }

    /// Sets `record`.
    pub fn record(mut self, what: impl IntoIterator<Item = Record>) -> Self {
        self.record = what.into_iter().collect();
        self
    }

    /// Sets `seed`.
    pub fn seed(mut self, seed: i64) -> Self {
        self.seed = Some(seed);
        self
    }
}

/// The result of a run.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Run {
    pub id: String,
    pub object: String,
    pub created: i64,
    pub model: String,
    pub deployment: String,
    pub outputs: Vec<RunOutput>,
    pub usage: RunUsage,
    /// The quantisation of a chip emulator's run, in words.
    #[serde(default)]
    pub warnings: Vec<String>,
}

/// One sample's result.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct RunOutput {
    pub index: u32,
    /// The output layer's spikes summed over the run; for a graded output
    /// (a leaky-integrator readout), its final values.
    pub spike_counts: Vec<f32>,
    /// The index of the largest count (the lowest on ties).
    pub prediction: u32,
    /// The output layer's membrane after the last step (cpu), or its
    /// final outputs (chip emulators).
    #[serde(default)]
    pub final_state: Vec<f32>,
    #[serde(default)]
    pub spikes: Option<Vec<[u32; 2]>>,
    #[serde(default)]
    pub membrane: Option<Vec<Vec<f32>>>,
}

/// What a run cost the device.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct RunUsage {
    pub samples: u32,
    pub timesteps: u64,
    #[serde(default)]
    pub spikes: f64,
    #[serde(default)]
    pub synaptic_ops: f64,
    #[serde(default)]
    pub energy_uj: f64,
    /// The chip's latency model on an emulator, the measured time on cpu.
    #[serde(default)]
    pub device_ms: f64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sample_forms() {
        let req = RunRequest::new(vec![
            Sample::from(vec![0.5f32, 1.0]),
            Sample::from(vec![vec![0.0f32, 1.0], vec![1.0, 0.0]]),
            Sample::from(EventSample { events: vec![[0, 1], [3, 0]], timesteps: 5 }),
        ])
        .record([Record::Spikes, Record::Membrane])
        .seed(7);
        let v = serde_json::to_value(&req).unwrap();
        assert_eq!(
            v,
            serde_json::json!({"inputs":[[0.5,1.0],[[0.0,1.0],[1.0,0.0]],{"events":[[0,1],[3,0]],"timesteps":5}],
                "record":["spikes","membrane"],"seed":7})
        );
    }

    #[test]
    fn packed_events() {
        let ev = EventSample { events: vec![[0, 3], [2, 9], [1, 0x7fff_ffff]], timesteps: 8 };
        let v = serde_json::to_value(RunRequest::new([Sample::from(ev.pack())])).unwrap();
        // 0,3 2,9 1,2147483647 as little-endian int32s.
        assert_eq!(v, serde_json::json!({"inputs":[{"events_packed":"AAAAAAMAAAACAAAACQAAAAEAAAD///9/","timesteps":8}]}));
        assert_eq!(EventSample { events: vec![], timesteps: 1 }.pack().events_packed, "");
    }

    #[test]
    fn raster() {
        let ev = EventSample { events: vec![[0, 0], [0, 2], [1, 1], [2, 2], [2, 2]], timesteps: 3 };
        let v = serde_json::to_value(RunRequest::new([Sample::from(ev.raster(3).unwrap())])).unwrap();
        // bits 0, 2, 4 and 8: 0x15, 0x01
        assert_eq!(v, serde_json::json!({"inputs":[{"raster":"FQE=","timesteps":3}]}));
        assert_eq!(EventSample { events: vec![], timesteps: 2 }.raster(5).unwrap().raster, "AAA=");
        assert_eq!(EventSample { events: vec![[1, 4]], timesteps: 2 }.raster(5).unwrap().raster, "AAI=");
        for (ev, inputs, want) in [
            (EventSample { events: vec![[3, 0]], timesteps: 3 }, 3, "event 0, [3, 0], is outside 3 timesteps of 3 inputs"),
            (EventSample { events: vec![[0, 0], [0, 3]], timesteps: 3 }, 3, "event 1, [0, 3], is outside 3 timesteps of 3 inputs"),
            (EventSample { events: vec![], timesteps: 0 }, 3, "a raster of 0 timesteps of 3 inputs"),
            (EventSample { events: vec![], timesteps: 3 }, 0, "a raster of 3 timesteps of 0 inputs"),
            (EventSample { events: vec![], timesteps: 3 }, usize::MAX, "a raster of 3 timesteps of"),
        ] {
            match ev.raster(inputs) {
                Err(Error::InvalidArgument(msg)) => assert!(msg.starts_with(want), "{msg}"),
                other => panic!("{ev:?} of {inputs} inputs: {other:?}"),
            }
        }
    }
}
