// Element-wise addition: each tile block adds one tile of `x` and `y` into `z`.
//
//   cutile-compile rust_examples/add.rs --entry add --generics B=1024 --arch sm_90 -o build/

#[cutile::module]
mod kernel {
    use cutile::core::*;

    #[cutile::entry()]
    fn add<const B: i32>(
        z: &mut Tensor<f32, { [B] }>,
        x: &Tensor<f32, { [-1] }>,
        y: &Tensor<f32, { [-1] }>,
    ) {
        let tx = x.load_like(z);
        let ty = load_tile_like(y, z);
        z.store(tx + ty);
    }

    /// `add` with launch hints for sm_90: `WARPS` worker warps per tile block and `occupancy
    /// = OCC` blocks per SM. On the H200 at 2^28 f32, B = 1024 with 8 warps (one 16-byte load
    /// per input and thread) and OCC = 4 is the only configuration measured above torch.add.
    #[cutile::entry(
        optimization_hints = (sm_90 = (occupancy = OCC, num_worker_warps_per_cta = WARPS))
    )]
    fn add_tuned<const B: i32, const OCC: i32, const WARPS: i32>(
        z: &mut Tensor<f32, { [B] }>,
        x: &Tensor<f32, { [-1] }>,
        y: &Tensor<f32, { [-1] }>,
    ) {
        z.store(load_tile_like(x, z) + load_tile_like(y, z));
    }

    /// `add` with clusters of `CTA` CTAs per tile block on sm_90 (`num_cta_in_cga`). The
    /// tile block id is the cluster's, so the host launches CTA CTAs per output tile and
    /// every tile is still written exactly once.
    #[cutile::entry(optimization_hints = (sm_90 = (num_cta_in_cga = CTA)))]
    fn add_clustered<const B: i32, const CTA: i32>(
        z: &mut Tensor<f32, { [B] }>,
        x: &Tensor<f32, { [-1] }>,
        y: &Tensor<f32, { [-1] }>,
    ) {
        z.store(load_tile_like(x, z) + load_tile_like(y, z));
    }

    /// The same kernel for any element type: `--generics E=f16,B=1024`.
    #[cutile::entry()]
    fn add_generic<E: ElementType, const B: i32>(
        z: &mut Tensor<E, { [B] }>,
        x: &Tensor<E, { [-1] }>,
        y: &Tensor<E, { [-1] }>,
    ) {
        z.store(load_tile_like(x, z) + load_tile_like(y, z));
    }

    /// `add_generic` with the launch hints of `add_tuned`: on the H200 a bf16 add wants 16
    /// bytes per thread and input too (B = 8 x 32 x WARPS).
    #[cutile::entry(
        optimization_hints = (sm_90 = (occupancy = OCC, num_worker_warps_per_cta = WARPS))
    )]
    fn add_generic_tuned<E: ElementType, const B: i32, const OCC: i32, const WARPS: i32>(
        z: &mut Tensor<E, { [B] }>,
        x: &Tensor<E, { [-1] }>,
        y: &Tensor<E, { [-1] }>,
    ) {
        z.store(load_tile_like(x, z) + load_tile_like(y, z));
    }
}

fn main() {
    // Host code around the module is ignored by the compiler.
}
