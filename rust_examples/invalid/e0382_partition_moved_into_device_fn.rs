// entry: f  generics: B=128
// A `Partition` is not `Copy`: passing it by value moves it.

#[cutile::module]
mod kernel {
    use cutile::core::*;

    fn first_tile(p: Partition<f32, { [16] }>) -> Tile<f32, { [16] }> {
        p.load([0i32])
    }

    #[cutile::entry()]
    fn f<const B: i32>(z: &mut Tensor<f32, { [B] }>, x: &Tensor<f32, { [-1] }>) {
        let part = x.partition(const_shape![16]);
        let a = first_tile(part);
        let b = part.load([1i32]); // ERROR[E0382]: borrow of moved value: `part`
    }
}
