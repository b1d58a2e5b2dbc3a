// entry: f  generics: B=128
// `load_tile_like(x, z)` borrows `z` while its `PartitionMut` is live (used after the `if`).

#[cutile::module]
mod kernel {
    use cutile::core::*;

    #[cutile::entry()]
    fn f<const B: i32>(z: &mut Tensor<f32, { [B] }>, x: &Tensor<f32, { [-1] }>) {
        let mut part = z.partition_mut(const_shape![16]);
        let (pid, _, _) = get_tile_block_id();
        if pid > 0i32 {
            let t = load_tile_like(x, z); // ERROR[E0502]: also borrowed as mutable
        }
        let one = constant(1.0f32, const_shape![16]);
        part.store(one, [0i32]);
    }
}
