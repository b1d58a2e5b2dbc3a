//! `gemm` (rust_examples/gemm.rs, E = f16, 128 x 128 x 64 tiles): z = x y in f16 with f32
//! accumulation, for sizes that are not multiples of the tiles, checked against an f32
//! reference on the host.

mod common;

use cutile_host::{args, DType, DeviceTensor};
use half::f16;

const SOURCE: &str = include_str!("../../../../rust_examples/gemm.rs");

fn main() {
    let setup = common::setup("gemm");
    let generics = [("E", "f16"), ("BM", "128"), ("BN", "128"), ("BK", "64")];
    let kernel = setup.kernel("gemm.rs", SOURCE, "gemm", &generics, false);
    let (m, n, k) = (300usize, 260usize, 192usize);
    let to_f16 = |v: Vec<f32>| v.into_iter().map(f16::from_f32).collect::<Vec<_>>();
    let (x, y) = (
        to_f16(common::values(m * k, 5)),
        to_f16(common::values(k * n, 6)),
    );
    let run = || -> cutile_host::Result<Vec<f32>> {
        let d = &setup.device;
        let xs = DeviceTensor::from_slice(d, &x, &[m as i64, k as i64])?.shared();
        let ys = DeviceTensor::from_slice(d, &y, &[k as i64, n as i64])?.shared();
        let z = DeviceTensor::zeros(d, DType::F16, &[m as i64, n as i64])?;
        let stream = d.stream()?;
        let mut done = kernel
            .op(args![z.partition(&[128, 128])?, xs, ys])
            .sync(&stream)?;
        let z = done.out(0)?.to_vec::<f16>()?;
        Ok(z.into_iter().map(f16::to_f32).collect())
    };
    let mut want = vec![0f32; m * n];
    for i in 0..m {
        for j in 0..n {
            let dot: f32 = (0..k)
                .map(|p| x[i * k + p].to_f32() * y[p * n + j].to_f32())
                .sum();
            want[i * n + j] = f16::from_f32(dot).to_f32();
        }
    }
    match run() {
        Ok(got) => common::verdict(
            setup.name,
            "300 x 260 x 192 in f16",
            &got,
            &want,
            2e-2,
            1e-2,
        ),
        Err(e) => common::fail(setup.name, &e),
    }
}
