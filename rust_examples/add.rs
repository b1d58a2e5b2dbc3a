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

    /// The same kernel for any element type: `--generics E=f16,B=1024`.
    #[cutile::entry()]
    fn add_generic<E: ElementType, const B: i32>(
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
