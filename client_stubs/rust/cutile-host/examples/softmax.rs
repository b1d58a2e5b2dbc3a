//! `softmax` (rust_examples/softmax.rs, BM = 4, N = 1024): row softmax of a 1001 x 1024
//! matrix, captured once in a CUDA graph and replayed three times.

mod common;

use cutile_host::{args, DType, DeviceTensor, Graph};

const SOURCE: &str = include_str!("../../../../rust_examples/softmax.rs");

fn main() {
    let setup = common::setup("softmax");
    let kernel = setup.kernel(
        "softmax.rs",
        SOURCE,
        "softmax",
        &[("BM", "4"), ("N", "1024")],
        false,
    );
    let (rows, cols) = (1001usize, 1024usize);
    let x: Vec<f32> = common::values(rows * cols, 7)
        .iter()
        .map(|v| v * 8.0)
        .collect();
    let run = || -> cutile_host::Result<Vec<f32>> {
        let d = &setup.device;
        let shape = [rows as i64, cols as i64];
        let xs = DeviceTensor::from_slice(d, &x, &shape)?.shared();
        let y = DeviceTensor::zeros(d, DType::F32, &shape)?;
        let mut graph = Graph::capture(d, kernel.op(args![y.partition(&[4, 1024])?, xs]))?;
        let stream = d.stream()?;
        for _ in 0..3 {
            graph.replay(&stream)?.sync()?;
        }
        setup
            .runtime
            .block_on(async { graph.replay(&stream)?.await })?;
        let mut args = graph.into_args()?;
        args.out(0)?.to_vec::<f32>()
    };
    let mut want = vec![0f32; rows * cols];
    for r in 0..rows {
        let row = &x[r * cols..(r + 1) * cols];
        let max = row.iter().cloned().fold(f32::MIN, f32::max);
        let sum: f32 = row.iter().map(|v| (v - max).exp()).sum();
        for c in 0..cols {
            want[r * cols + c] = (row[c] - max).exp() / sum;
        }
    }
    match run() {
        Ok(got) => common::verdict(
            setup.name,
            "1001 x 1024 rows, graph replayed 4 times",
            &got,
            &want,
            1e-6,
            1e-4,
        ),
        Err(e) => common::fail(setup.name, &e),
    }
}
