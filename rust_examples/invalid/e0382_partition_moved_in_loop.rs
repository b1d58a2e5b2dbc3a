// entry: f  generics: B=128
// Moved on the first iteration, used again on the next.

#[cutile::module]
mod kernel {
    use cutile::core::*;

    fn first_tile(p: Partition<f32, { [16] }>) -> Tile<f32, { [16] }> {
        p.load([0i32])
    }

    #[cutile::entry()]
    fn f<const B: i32>(z: &mut Tensor<f32, { [B] }>, x: &Tensor<f32, { [-1] }>) {
        let part = x.partition(const_shape![16]);
        for i in 0i32..4i32 {
            let t = first_tile(part); // ERROR[E0382]: use of moved value: `part`
        }
    }
}
