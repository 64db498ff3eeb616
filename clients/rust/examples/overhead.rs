//! What the client costs per call, beside a raw ureq call sending the same
//! bytes, for a small run request against a real server on this machine:
//!
//!     cargo run --release --example overhead [-- CALLS]
//!
//! It starts `examples/server` (NEURO_TEST_SERVER, else `go build`),
//! compiles and deploys a small snnTorch network (8 inputs, 4 outputs) and
//! runs one 8-value sample for 10 steps, CALLS times (default 2000) each
//! way, in interleaved batches so that all see the same server and
//! machine. The raw call posts pre-encoded JSON and reads the body as
//! bytes, once with no timeout and once with the per-call timeout the
//! client sets (ureq then resets the socket's timeouts at every read); the
//! client's call also encodes the request, checks the status and decodes
//! the typed result. Reported: wall time per call (median, mean, p90) and
//! this thread's CPU time per call, which is the client's side only (the
//! server is another process).

#[path = "../tests/support/server.rs"]
mod server;

use std::io::Read;
use std::time::{Duration, Instant};

use neuro_client::{Client, DeploymentRequest, Format, Run, RunRequest};

/// Calls per batch; batches rotate through the orders of the three ways.
const BATCH: usize = 25;

/// A deployment of one key's network, and how to call it both ways.
struct Target {
    client: Client,
    auth: String,
    url: String,
    deployment: String,
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let calls: usize = std::env::args().nth(1).map(|a| a.parse()).transpose()?.unwrap_or(2000);
    let calls = calls.max(BATCH) / BATCH * BATCH;
    let srv = server::start(false);
    // The server allows 600 requests a minute per key: the calls are spread
    // over the bench keys.
    let keys: Vec<String> = server::KEY_NAMES.iter().filter(|k| k.starts_with("bench")).map(|k| server::key(k)).collect();
    let per_key = (3 * calls + 3 * 100) / keys.len() + 1;
    assert!(per_key < 550, "{calls} calls would pass the rate limit of {} keys", keys.len());

    let pt = std::fs::read(server::repo_root().join("compile/pytorch/testdata/snn/snntorch_leaky.pt"))?;
    // Networks belong to their owner: every key compiles and deploys its own.
    let mut targets = Vec::new();
    for key in &keys {
        let c = Client::new(&srv.url, key)?;
        let net = c.networks().compile(&pt, Format::PyTorch, None)?;
        let dep = c.deployments().create(&DeploymentRequest::new(&net.id, "cpu"))?;
        c.deployments().wait(&dep.id, Duration::from_secs(60))?;
        let url = format!("{}/v1/deployments/{}/run", srv.url, dep.id);
        targets.push(Target { client: c, auth: format!("Bearer {key}"), url, deployment: dep.id });
    }

    let req = RunRequest::new(vec![vec![0.5f32; 8]]).timesteps(10);
    let body = serde_json::to_vec(&req)?;
    let agent = ureq::AgentBuilder::new().build();
    let raw = |t: &Target, timeout: Option<Duration>| -> Result<usize, Box<dyn std::error::Error>> {
        let mut r = agent.post(&t.url);
        if let Some(d) = timeout {
            r = r.timeout(d);
        }
        let resp = r.set("Authorization", &t.auth).set("Content-Type", "application/json").send_bytes(&body)?;
        let mut out = Vec::new();
        resp.into_reader().read_to_end(&mut out)?;
        Ok(out.len())
    };
    let call = |way: usize, t: &Target| -> Result<(), Box<dyn std::error::Error>> {
        match way {
            0 => raw(t, None).map(drop),
            1 => raw(t, Some(neuro_client::DEFAULT_TIMEOUT)).map(drop),
            _ => {
                let r: Run = t.client.deployments().run(&t.deployment, &req)?;
                assert_eq!(r.outputs.len(), 1);
                Ok(())
            }
        }
    };

    // Warm-up: connections, caches, the server's first runs.
    for i in 0..100 {
        for way in 0..3 {
            call(way, &targets[i % targets.len()])?;
        }
    }

    let mut wall = [Vec::with_capacity(calls), Vec::with_capacity(calls), Vec::with_capacity(calls)];
    let mut cpu = [Duration::ZERO; 3];
    const ORDERS: [[usize; 3]; 6] = [[0, 1, 2], [2, 1, 0], [1, 2, 0], [0, 2, 1], [2, 0, 1], [1, 0, 2]];
    for b in 0..calls / BATCH {
        let t = &targets[b % targets.len()];
        for way in ORDERS[b % ORDERS.len()] {
            let c0 = thread_cpu();
            for _ in 0..BATCH {
                let start = Instant::now();
                call(way, t)?;
                wall[way].push(start.elapsed());
            }
            if let (Some(c0), Some(c1)) = (c0, thread_cpu()) {
                cpu[way] += c1 - c0;
            }
        }
    }

    println!("CPU: {}", cpu_name());
    println!("{calls} run calls each way (1 sample x 8 values, 10 steps), interleaved in batches of {BATCH}");
    println!("{:<22} {:>10} {:>10} {:>10} {:>14}", "", "median", "mean", "p90", "client CPU");
    let stats: Vec<_> = wall.iter_mut().map(|w| summary(w)).collect();
    for (way, name) in ["raw ureq", "raw ureq + timeout", "neuro-client"].iter().enumerate() {
        let s = &stats[way];
        let c = if cpu[way].is_zero() { "n/a".to_string() } else { us(cpu[way] / calls as u32) };
        println!("{:<22} {:>10} {:>10} {:>10} {:>14}", name, us(s.0), us(s.1), us(s.2), c);
    }
    let pct = |a: Duration, b: Duration| 100.0 * (b.as_secs_f64() / a.as_secs_f64() - 1.0);
    for (base, name) in [(0, "raw ureq"), (1, "raw ureq + timeout")] {
        let cpu_diff = if cpu[base].is_zero() {
            "n/a".to_string()
        } else {
            format!("{:+.1} us per call", (cpu[2].as_secs_f64() - cpu[base].as_secs_f64()) * 1e6 / calls as f64)
        };
        println!(
            "client over {name}: median {:+.1}%, mean {:+.1}%, client CPU {cpu_diff}",
            pct(stats[base].0, stats[2].0),
            pct(stats[base].1, stats[2].1)
        );
    }
    Ok(())
}

/// Median, mean and 90th percentile.
fn summary(w: &mut [Duration]) -> (Duration, Duration, Duration) {
    w.sort();
    let mean = w.iter().sum::<Duration>() / w.len() as u32;
    (w[w.len() / 2], mean, w[w.len() * 9 / 10])
}

fn us(d: Duration) -> String {
    format!("{:.1} us", d.as_secs_f64() * 1e6)
}

/// This thread's CPU time, from the scheduler's accounting (Linux).
fn thread_cpu() -> Option<Duration> {
    let s = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    s.split_whitespace().next()?.parse().ok().map(Duration::from_nanos)
}

fn cpu_name() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| s.lines().find(|l| l.starts_with("model name")).and_then(|l| l.split(':').nth(1)).map(|n| n.trim().to_string()))
        .unwrap_or_else(|| "unknown".into())
}
