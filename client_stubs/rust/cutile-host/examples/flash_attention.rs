//! `flash_attention` (rust_examples/flash_attention.rs, E = bf16, BM = BN = D = 64,
//! CAUSAL = 0): attention over 4 heads of 1000 positions in sequence-major [L, heads, D]
//! tensors, launched eagerly on a stream, checked against an f32 reference.

mod common;

use cutile_host::{args, DType, DeviceTensor};
use half::bf16;

const SOURCE: &str = include_str!("../../../../rust_examples/flash_attention.rs");

fn main() {
    let setup = common::setup("flash_attention");
    let generics = [
        ("E", "bf16"),
        ("BM", "64"),
        ("BN", "64"),
        ("D", "64"),
        ("CAUSAL", "0"),
    ];
    let kernel = setup.kernel(
        "flash_attention.rs",
        SOURCE,
        "flash_attention",
        &generics,
        false,
    );
    let (len, heads, d) = (1000usize, 4usize, 64usize);
    let to_bf16 = |v: Vec<f32>| v.into_iter().map(bf16::from_f32).collect::<Vec<_>>();
    let q = to_bf16(common::values(len * heads * d, 8));
    let k = to_bf16(common::values(len * heads * d, 9));
    let v = to_bf16(common::values(len * heads * d, 10));
    let scale = 1.0 / (d as f32).sqrt();
    let run = || -> cutile_host::Result<Vec<f32>> {
        let dev = &setup.device;
        let shape = [len as i64, heads as i64, d as i64];
        let qs = DeviceTensor::from_slice(dev, &q, &shape)?.shared();
        let ks = DeviceTensor::from_slice(dev, &k, &shape)?.shared();
        let vs = DeviceTensor::from_slice(dev, &v, &shape)?.shared();
        let out = DeviceTensor::zeros(dev, DType::BF16, &shape)?;
        let mut launch = args![out.partition(&[64, 1, 64])?, qs, ks, vs, scale];
        let stream = dev.stream()?;
        kernel.launch(&stream, &launch, None)?; // eager: the stream keeps the memory alive
        stream.synchronize()?;
        let out = launch.out(0)?.to_vec::<bf16>()?;
        Ok(out.into_iter().map(bf16::to_f32).collect())
    };
    let at = |t: &[bf16], i: usize, h: usize, c: usize| t[(i * heads + h) * d + c].to_f32();
    let mut want = vec![0f32; len * heads * d];
    for h in 0..heads {
        for i in 0..len {
            let scores: Vec<f32> = (0..len)
                .map(|j| {
                    (0..d)
                        .map(|c| at(&q, i, h, c) * at(&k, j, h, c))
                        .sum::<f32>()
                        * scale
                })
                .collect();
            let max = scores.iter().cloned().fold(f32::MIN, f32::max);
            let weights: Vec<f32> = scores.iter().map(|s| (s - max).exp()).collect();
            let total: f32 = weights.iter().sum();
            for c in 0..d {
                let acc: f32 = (0..len).map(|j| weights[j] * at(&v, j, h, c)).sum();
                want[(i * heads + h) * d + c] = acc / total;
            }
        }
    }
    match run() {
        Ok(got) => common::verdict(
            setup.name,
            "4 heads x 1000 x 64 in bf16",
            &got,
            &want,
            2e-2,
            2e-2,
        ),
        Err(e) => common::fail(setup.name, &e),
    }
}
