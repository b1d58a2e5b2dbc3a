// entry: f  generics: BM=32 BN=32
// `num_tiles(&p, axis)` needs a constant axis within the partition's rank.

#[cutile::module]
mod kernel {
    use cutile::core::*;

    #[cutile::entry()]
    fn f<const BM: i32, const BN: i32>(z: &mut Tensor<f32, { [BM, BN] }>, x: &Tensor<f32, { [-1, -1] }>) {
        let px = x.partition(const_shape![BM, BN]);
        let cols = num_tiles(&px, 1);
        let depth = num_tiles(&px, 2); // ERROR[CT0102]: the axis must be a constant in 0..2
        let (block, _, _) = get_tile_block_id();
        let any = num_tiles(&px, block); // ERROR[CT0102]: the axis must be a constant
        z.store(load_tile_like(x, z));
    }
}
