// entry: f  generics: B=128
// `store_tile(z, ..)` borrows `z` mutably before its second argument runs, which needs `&mut`
// too. (The method form `z.store(z.load())` is accepted: see parser/checks/ownership.py.)

#[cutile::module]
mod kernel {
    use cutile::core::*;

    #[cutile::entry()]
    fn f<const B: i32>(z: &mut Tensor<f32, { [B] }>, x: &Tensor<f32, { [-1] }>) {
        store_tile(z, load_tile_mut(z)); // ERROR[E0499]: more than once at a time
    }
}
