//! The snnTorch/Norse workflow: networks that the libraries saved and ran
//! themselves (compile/pytorch/testdata/snn, written by gen.py there) are
//! compiled, deployed and run through the client, and give the libraries'
//! output spike counts.

use std::time::Duration;

use neuro_client::{CompileOptions, DeploymentRequest, EventSample, Format, LayerSpec, Record, RunRequest, Sample};
use serde_json::Value;

use crate::{both, client, server};

/// A fixture: its state_dict, the input the library ran and the library's
/// output for it.
struct Fixture {
    name: &'static str,
    pt: Vec<u8>,
    input: Vec<Vec<f32>>,
    /// The output layer's spikes summed over the run; for a
    /// leaky-integrator readout (no spikes), its last membrane.
    want: Vec<f64>,
    spiking: bool,
    options: Option<CompileOptions>,
}

/// The layer descriptions the Norse state_dicts need (they hold only the
/// weights), as in httpapi's own test of these fixtures.
fn norse_layers(name: &str) -> Option<&'static [(&'static str, &'static str)]> {
    match name {
        "norse_lif" => {
            Some(&[("0", "linear"), ("1", "norse.lif"), ("2", "linear"), ("3", "norse.lif"), ("4", "linear"), ("5", "norse.li")])
        }
        "norse_lifrecurrent" => Some(&[("0", "norse.lifrecurrent"), ("1", "linear"), ("2", "norse.lif")]),
        _ => None,
    }
}

fn load(name: &'static str) -> Fixture {
    let dir = server::repo_root().join("compile/pytorch/testdata/snn");
    let pt = std::fs::read(dir.join(format!("{name}.pt"))).unwrap();
    let reference: Value = serde_json::from_slice(&std::fs::read(dir.join(format!("{name}.json"))).unwrap()).unwrap();
    let steps = reference["steps"].as_u64().unwrap() as usize;
    let input: Vec<Vec<f32>> = serde_json::from_value(reference["input"].clone()).unwrap();
    let layers = reference["layers"].as_object().unwrap();
    let last = layers.keys().max_by_key(|k| k.parse::<u32>().unwrap()).unwrap();
    let out = &layers[last];
    let spiking = out["kind"] != "LICell";
    let series: Vec<Vec<f64>> = serde_json::from_value(if spiking { out["spikes"].clone() } else { out["mem"].clone() }).unwrap();
    let want = if spiking {
        (0..series[0].len()).map(|i| series[..steps].iter().map(|s| s[i]).sum()).collect()
    } else {
        series[steps - 1].clone()
    };
    let options = norse_layers(name).map(|specs| {
        let layers = specs
            .iter()
            .map(|(layer, kind)| {
                let params = reference["params"][*layer].as_object().cloned().unwrap_or_default();
                params.iter().fold(LayerSpec::new(*layer, *kind), |l, (k, v)| l.param(k.as_str(), v.as_f64().unwrap()))
            })
            .collect();
        CompileOptions::new().layers(layers).dt(reference["dt"].as_f64().unwrap())
    });
    Fixture { name, pt, input: input[..steps].to_vec(), want, spiking, options }
}

const FIXTURES: [&str; 6] =
    ["snntorch_leaky", "snntorch_synaptic", "snntorch_rleaky", "snntorch_rsynaptic_v", "norse_lif", "norse_lifrecurrent"];

#[test]
fn snntorch_and_norse_networks_give_the_libraries_spike_counts() {
    for srv in both() {
        let c = client(&srv, "snn");
        for name in FIXTURES {
            let f = load(name);
            let net = c.networks().compile(&f.pt, Format::PyTorch, f.options.as_ref()).unwrap_or_else(|e| panic!("{name}: compile: {e}"));
            assert_eq!(net.network.inputs as usize, f.input[0].len(), "{name}");
            assert_eq!(net.network.outputs as usize, f.want.len(), "{name}");
            let dep = c.deployments().create(&DeploymentRequest::new(&net.id, "cpu")).unwrap();
            c.deployments().wait(&dep.id, Duration::from_secs(60)).unwrap();

            let run = c.deployments().run(&dep.id, &RunRequest::new(vec![f.input.clone()])).unwrap();
            assert_eq!(
                (run.model.as_str(), run.deployment.as_str(), run.object.as_str()),
                (net.id.as_str(), dep.id.as_str(), "network.run")
            );
            assert_eq!(run.usage.timesteps, f.input.len() as u64, "{name}");
            let got: Vec<f64> = run.outputs[0].spike_counts.iter().map(|&v| f64::from(v)).collect();
            if f.spiking {
                assert_eq!(got, f.want, "{name} ({}): the library's output spike counts", if srv.mock { "mock" } else { "real" });
            } else {
                let diff = got.iter().zip(&f.want).map(|(g, w)| (g - w).abs()).fold(0.0, f64::max);
                assert!(got.len() == f.want.len() && diff <= 1e-4, "{name}: readout {got:?}, the library's {:?}", f.want);
            }
            eprintln!("{} ({} server): output {got:?}, as the library's", f.name, if srv.mock { "mock" } else { "real" });

            c.deployments().delete(&dep.id).unwrap();
            c.models().delete(&net.id).unwrap();
        }
    }
}

/// The three forms of a sample, recording, and batching: a sample gives
/// the same result alone or beside others.
#[test]
fn run_sample_forms_and_recording() {
    let c = client(&server::real(), "runs");
    let f = load("snntorch_leaky");
    let net = c.networks().compile(&f.pt, Format::PyTorch, Some(&CompileOptions::new().name("leaky-runs"))).unwrap();
    let dep = c.deployments().create(&DeploymentRequest::new(&net.id, "cpu").id("rust-runs").max_batch_size(4)).unwrap();
    c.deployments().wait(&dep.id, Duration::from_secs(60)).unwrap();

    let full = c.deployments().run(&dep.id, &RunRequest::new(vec![f.input.clone()])).unwrap();
    assert_eq!(full.outputs[0].spike_counts.iter().map(|&v| f64::from(v)).collect::<Vec<_>>(), f.want);

    // 30 steps each: a matrix of 30 rows, a vector presented 30 times, and
    // input spikes over 30 steps.
    let matrix = Sample::from(f.input[..30].to_vec());
    let vector = Sample::from(vec![0.6f32; 8]);
    let events = Sample::from(EventSample { events: (0..30).map(|t| [t, t % 8]).collect(), timesteps: 30 });
    let alone: Vec<_> = [&matrix, &vector, &events]
        .iter()
        .map(|s| {
            let req =
                RunRequest { inputs: vec![(*s).clone()], timesteps: matches!(s, Sample::Vector(_)).then(|| 30), ..Default::default() };
            c.deployments().run(&dep.id, &req).unwrap().outputs.remove(0)
        })
        .collect();

    // The same samples together, recording spikes and membranes.
    let batch = c
        .deployments()
        .run(&dep.id, &RunRequest::new(vec![matrix, vector, events]).timesteps(30).record([Record::Spikes, Record::Membrane]))
        .unwrap();
    assert_eq!(batch.usage.samples, 3);
    assert_eq!(batch.outputs.iter().map(|o| o.index).collect::<Vec<_>>(), [0, 1, 2]);
    for (o, a) in batch.outputs.iter().zip(&alone) {
        assert_eq!((&o.spike_counts, o.prediction), (&a.spike_counts, a.prediction), "sample {}", o.index);
        let spikes = o.spikes.as_ref().expect("recorded spikes");
        assert_eq!(spikes.len() as f32, o.spike_counts.iter().sum::<f32>(), "sample {}", o.index);
        assert!(o.membrane.as_ref().map_or(false, |m| !m.is_empty() && m[0].len() == 4), "sample {}", o.index);
    }
    assert_eq!(batch.outputs[1].membrane.as_ref().unwrap().len(), 30, "30 steps of the vector sample");

    // The events in compact form, and as a raster, run as the events.
    let ev = EventSample { events: (0..30).map(|t| [t, t % 8]).collect(), timesteps: 30 };
    let p = c.deployments().run(&dep.id, &RunRequest::new(vec![Sample::from(ev.pack())])).unwrap();
    assert_eq!((&p.outputs[0].spike_counts, p.outputs[0].prediction), (&alone[2].spike_counts, alone[2].prediction));
    let raster = ev.raster(net.network.inputs as usize).unwrap();
    let r = c.deployments().run(&dep.id, &RunRequest::new(vec![Sample::from(raster)])).unwrap();
    assert_eq!((&r.outputs[0].spike_counts, r.outputs[0].prediction), (&alone[2].spike_counts, alone[2].prediction));
    assert!(batch.usage.spikes > 0.0 && batch.usage.device_ms > 0.0, "{:?}", batch.usage);

    // The same network on the Loihi emulator: a fixed-point run, which
    // says how it was quantised.
    let loihi = c.deployments().create(&DeploymentRequest::new(&net.id, "loihi")).unwrap();
    c.deployments().wait(&loihi.id, Duration::from_secs(60)).unwrap();
    let chip = c.deployments().run(&loihi.id, &RunRequest::new(vec![f.input.clone()])).unwrap();
    assert!(!chip.warnings.is_empty(), "the emulator's run states its quantisation");
    assert_eq!(chip.outputs[0].spike_counts.len(), 4);

    for id in [&loihi.id, &dep.id] {
        c.deployments().delete(id).unwrap();
    }
    c.models().delete(&net.id).unwrap();
}
