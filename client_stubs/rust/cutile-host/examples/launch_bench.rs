//! The launch benchmark: what this crate adds to a kernel launch, measured in one process on
//! `add` (B = 1024) over 2^20 elements.
//!
//! * eager: `Kernel::launch` (checks on a repeated layout reuse the checked plan) next to a raw
//!   `cuLaunchKernel` of the same function and parameters, N launches queued then one
//!   synchronize, per launch (target: at most 1.1x raw);
//! * round trip: `op.sync(&stream)` next to `op.on(&stream).await` on tokio, each launch
//!   waited for before the next (target: `.await` within 10% of `.sync()`).
//!
//! Each figure is the median of 7 interleaved rounds.

mod common;

use std::time::Instant;

use cutile_host::{args, DType, DeviceTensor};

const SOURCE: &str = include_str!("../../../../rust_examples/add.rs");
const EAGER: usize = 20_000;
const ROUND_TRIPS: usize = 2_000;
const ROUNDS: usize = 7;

fn median(mut samples: Vec<f64>) -> f64 {
    samples.sort_by(|a, b| a.partial_cmp(b).unwrap());
    samples[samples.len() / 2]
}

fn main() {
    let setup = common::setup("launch_bench");
    let kernel = setup.kernel("add.rs", SOURCE, "add", &[("B", "1024")], false);
    let run = || -> cutile_host::Result<()> {
        let d = &setup.device;
        let n = 1i64 << 20;
        let x = DeviceTensor::zeros(d, DType::F32, &[n])?.shared();
        let y = DeviceTensor::zeros(d, DType::F32, &[n])?.shared();
        let z = DeviceTensor::zeros(d, DType::F32, &[n])?;
        let stream = d.stream()?;
        let mut args = args![z.partition(&[1024])?, &x, &y];
        let mut raw = kernel
            .choose(&args, None)
            .raw_launch(&stream, &args, None)?;
        kernel.launch(&stream, &args, None)?; // load, verify, warm up
        stream.synchronize()?;
        let (mut raw_us, mut eager_us) = (Vec::new(), Vec::new());
        for _ in 0..ROUNDS {
            let t = Instant::now();
            for _ in 0..EAGER {
                // SAFETY: `args` outlives the work (synchronized below) on its own device.
                unsafe { raw.launch(&stream)? };
            }
            raw_us.push(t.elapsed().as_secs_f64() * 1e6 / EAGER as f64);
            stream.synchronize()?;
            let t = Instant::now();
            for _ in 0..EAGER {
                kernel.launch(&stream, &args, None)?;
            }
            eager_us.push(t.elapsed().as_secs_f64() * 1e6 / EAGER as f64);
            stream.synchronize()?;
        }
        let (mut sync_us, mut await_us) = (Vec::new(), Vec::new());
        for _ in 0..ROUNDS {
            let t = Instant::now();
            for _ in 0..ROUND_TRIPS {
                args = kernel.op(args).sync(&stream)?;
            }
            sync_us.push(t.elapsed().as_secs_f64() * 1e6 / ROUND_TRIPS as f64);
            let (elapsed, back) = setup.runtime.block_on(async {
                let t = Instant::now();
                let mut a = std::mem::take(&mut args);
                for _ in 0..ROUND_TRIPS {
                    a = kernel.op(a).on(&stream).await?;
                }
                Ok::<_, cutile_host::Error>((t.elapsed(), a))
            })?;
            args = back;
            await_us.push(elapsed.as_secs_f64() * 1e6 / ROUND_TRIPS as f64);
        }
        let (raw, eager, sync, awaited) = (
            median(raw_us),
            median(eager_us),
            median(sync_us),
            median(await_us),
        );
        println!(
            "launch_bench: add<B=1024> over 2^20 f32 on {} (device {})",
            d.sm(),
            d.ordinal()
        );
        println!("  raw cuLaunchKernel        {raw:8.3} us/launch");
        println!(
            "  Kernel::launch (checked)  {eager:8.3} us/launch   {:.2}x raw (target <= 1.10x)",
            eager / raw
        );
        println!("  op.sync() round trip      {sync:8.3} us");
        println!(
            "  op.await round trip       {awaited:8.3} us        {:.2}x sync (target <= 1.10x)",
            awaited / sync
        );
        let met = eager / raw <= 1.10 && awaited / sync <= 1.10;
        println!(
            "launch_bench: {}",
            if met {
                "PASS (both targets met)"
            } else {
                "MISSED (a target was not met)"
            }
        );
        Ok(())
    };
    if let Err(e) = run() {
        common::fail(setup.name, &e);
    }
}
