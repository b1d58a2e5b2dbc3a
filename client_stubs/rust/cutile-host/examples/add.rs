//! `add` (rust_examples/add.rs, B = 1024): z = x + y, run three ways (`.sync()`, `.await`,
//! and a chain that feeds z into a second add: w = z + y), checked on the host.

mod common;

use cutile_host::{args, DType, DeviceTensor};

const SOURCE: &str = include_str!("../../../../rust_examples/add.rs");

fn main() {
    let setup = common::setup("add");
    let name = setup.name;
    let kernel = setup.kernel("add.rs", SOURCE, "add", &[("B", "1024")], false);
    let run = || -> cutile_host::Result<Vec<f32>> {
        let n = 1_000_003usize;
        let (x, y) = (common::values(n, 1), common::values(n, 2));
        let device = &setup.device;
        let dims = [n as i64];
        let xs = DeviceTensor::from_slice(device, &x, &dims)?.shared();
        let ys = DeviceTensor::from_slice(device, &y, &dims)?.shared();
        let stream = device.stream()?;

        // .sync(): the arguments come back once the work is complete
        let z = DeviceTensor::zeros(device, DType::F32, &dims)?;
        let mut done = kernel
            .op(args![z.partition(&[1024])?, &xs, &ys])
            .sync(&stream)?;
        let z = done.out(0)?.unpartition().to_vec::<f32>()?;
        let want: Vec<f32> = x.iter().zip(&y).map(|(a, b)| a + b).collect();
        if z != want {
            common::fail(name, &"z = x + y differs after .sync()");
        }

        // .await on tokio, then a chain on one stream: w = (x + y) + y
        let z = DeviceTensor::zeros(device, DType::F32, &dims)?;
        let mut done = setup
            .runtime
            .block_on(async { kernel.op(args![z.partition(&[1024])?, &xs, &ys]).await })?;
        if done.out(0)?.to_vec::<f32>()? != want {
            common::fail(name, &"z = x + y differs after .await");
        }
        let (second, ys2) = (kernel.clone(), ys.clone());
        let z = DeviceTensor::zeros(device, DType::F32, &dims)?;
        let w = DeviceTensor::zeros(device, DType::F32, &dims)?;
        let chain = kernel
            .op(args![z.partition(&[1024])?, &xs, &ys])
            .then_with(move |mut out| {
                let z = out.out(0)?.unpartition().shared();
                Ok(second.op(args![w.partition(&[1024])?, z, ys2]))
            });
        let mut done = chain.sync(&stream)?;
        done.out(0)?.unpartition().to_vec::<f32>()
    };
    let n = 1_000_003usize;
    let (x, y) = (common::values(n, 1), common::values(n, 2));
    let want: Vec<f32> = x.iter().zip(&y).map(|(a, b)| (a + b) + b).collect();
    match run() {
        Ok(got) => common::verdict(
            name,
            "z = x + y by .sync and .await, w = z + y chained",
            &got,
            &want,
            0.0,
            0.0,
        ),
        Err(e) => common::fail(name, &e),
    }
}
