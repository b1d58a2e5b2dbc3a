//! `saxpy` (rust_examples/saxpy.rs, E = f32, B = 1024): y = a * x + y, awaited on tokio.

mod common;

use cutile_host::{args, DeviceTensor};

const SOURCE: &str = include_str!("../../../../rust_examples/saxpy.rs");

fn main() {
    let setup = common::setup("saxpy");
    let kernel = setup.kernel(
        "saxpy.rs",
        SOURCE,
        "saxpy",
        &[("E", "f32"), ("B", "1024")],
        false,
    );
    let n = 1 << 20;
    let (x, y, a) = (common::values(n, 3), common::values(n, 4), 2.5f32);
    let run = || -> cutile_host::Result<Vec<f32>> {
        let dims = [n as i64];
        let xs = DeviceTensor::from_slice(&setup.device, &x, &dims)?.shared();
        let ys = DeviceTensor::from_slice(&setup.device, &y, &dims)?;
        let op = kernel.op(args![a, xs, ys.partition(&[1024])?]);
        let mut done = setup.runtime.block_on(async { op.await })?;
        done.out(2)?.to_vec::<f32>()
    };
    let want: Vec<f32> = x.iter().zip(&y).map(|(x, y)| a * x + y).collect();
    match run() {
        Ok(got) => common::verdict(
            setup.name,
            "y = 2.5 x + y, awaited",
            &got,
            &want,
            1e-6,
            1e-6,
        ),
        Err(e) => common::fail(setup.name, &e),
    }
}
