//! What every example shares: where kernels come from (a running cutile-serve or a bundle
//! folder), the GPU, deterministic inputs and the verdict line.
//!
//! ```text
//! cargo run --example add -- --server 127.0.0.1:50051 [--token-file F] [--tls-ca PEM]
//! cargo run --example add -- --bundle gpu_artifacts/bundle
//! ```

#![allow(dead_code)]

use std::sync::Arc;

use cutile_host::artifacts::Bundle;
use cutile_host::client::{CompileClient, Connection, Source};
use cutile_host::launch::host_arch;
use cutile_host::{Device, Kernel, Variants};

/// The exit status of an example that found no GPU.
pub const SKIPPED: i32 = 3;

/// Where kernels come from.
pub enum Origin {
    Server(Box<CompileClient>),
    Bundle(Bundle),
}

pub struct Setup {
    pub origin: Origin,
    pub device: Device,
    pub runtime: tokio::runtime::Runtime,
    pub name: &'static str,
}

fn usage(name: &str) -> ! {
    eprintln!(
        "usage: {name} (--server HOST:PORT [--token-file FILE] [--tls-ca PEM] | --bundle DIR) [--device N]"
    );
    std::process::exit(2)
}

/// Parse the command line and open the GPU; exits (SKIP, status 3) without a GPU.
pub fn setup(name: &'static str) -> Setup {
    let mut argv = std::env::args().skip(1);
    let (mut server, mut bundle, mut token, mut ca, mut ordinal) = (None, None, None, None, 0);
    while let Some(flag) = argv.next() {
        let mut value = || argv.next().unwrap_or_else(|| usage(name));
        match flag.as_str() {
            "--server" => server = Some(value()),
            "--bundle" => bundle = Some(value()),
            "--token-file" => token = Some(value()),
            "--tls-ca" => ca = Some(value()),
            "--device" => ordinal = value().parse().unwrap_or_else(|_| usage(name)),
            _ => usage(name),
        }
    }
    if !cutile_host::driver::available() {
        println!("{name}: SKIP (no CUDA driver or GPU on this machine)");
        std::process::exit(SKIPPED);
    }
    let device = Device::new(ordinal).unwrap_or_else(|e| fail(name, &e));
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a tokio runtime");
    let origin = match (server, bundle) {
        (Some(target), None) => {
            let mut connection = Connection::new(&target);
            connection.token = token.map(|f| {
                std::fs::read_to_string(&f)
                    .unwrap_or_else(|e| fail(name, &format!("{f}: {e}")))
                    .trim()
                    .to_string()
            });
            connection.tls_ca_pem =
                ca.map(|f| std::fs::read(&f).unwrap_or_else(|e| fail(name, &format!("{f}: {e}"))));
            Origin::Server(Box::new(
                CompileClient::new(&connection).unwrap_or_else(|e| fail(name, &e)),
            ))
        }
        (None, Some(dir)) => Origin::Bundle(Bundle::open(&dir).unwrap_or_else(|e| fail(name, &e))),
        _ => usage(name),
    };
    Setup {
        origin,
        device,
        runtime,
        name,
    }
}

impl Setup {
    /// `entry` of `file` (its text `source`) at `generics`, for this GPU, verified: from a
    /// bundle, every variant it holds (each launch takes the best its arguments meet).
    pub fn kernel(
        &self,
        file: &str,
        source: &str,
        entry: &str,
        generics: &[(&str, &str)],
        allow_unchecked: bool,
    ) -> Arc<Variants> {
        let kernel = match &self.origin {
            Origin::Bundle(bundle) => bundle.kernel(
                entry,
                generics,
                Some(self.device.sm()),
                None,
                allow_unchecked,
            ),
            Origin::Server(client) => {
                let mut request = Source::new(file, source, entry)
                    .target(self.device.sm())
                    .host_arch(host_arch());
                for (k, v) in generics {
                    request = request.generic(k, v);
                }
                self.runtime
                    .block_on(client.compile(&request))
                    .and_then(|artifact| Kernel::from_artifact(&artifact, allow_unchecked))
                    .and_then(|kernel| {
                        Variants::new(vec![((0, false, 0), Arc::new(kernel), file.into())])
                    })
            }
        };
        Arc::new(kernel.unwrap_or_else(|e| fail(self.name, &e)))
    }
}

pub fn fail(name: &str, error: &dyn std::fmt::Display) -> ! {
    println!("{name}: FAIL ({error})");
    std::process::exit(1)
}

/// Deterministic values in [-1, 1) (a 64-bit LCG).
pub fn values(n: usize, seed: u64) -> Vec<f32> {
    let mut state = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    (0..n)
        .map(|_| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((state >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0
        })
        .collect()
}

/// Print the verdict: PASS when every |got - want| <= atol + rtol * |want|.
pub fn verdict(name: &str, what: &str, got: &[f32], want: &[f32], atol: f32, rtol: f32) -> ! {
    assert_eq!(got.len(), want.len());
    let mut worst = 0f32;
    let mut bad = 0usize;
    for (g, w) in got.iter().zip(want) {
        let err = (g - w).abs();
        worst = worst.max(err);
        if err.is_nan() || err > atol + rtol * w.abs() {
            bad += 1;
        }
    }
    if bad == 0 {
        println!("{name}: PASS ({what}; max abs error {worst:.3e})");
        std::process::exit(0)
    }
    println!(
        "{name}: FAIL ({what}; {bad} of {} elements off, max abs error {worst:.3e})",
        got.len()
    );
    std::process::exit(1)
}
