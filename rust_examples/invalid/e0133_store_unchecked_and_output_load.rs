// entry: f  generics: B=128
// `store_unchecked` skips the bounds check and `PartitionMut::load` reads an output other
// blocks may be writing: both are `unsafe fn`s, fine inside `unsafe {}`.

#[cutile::module]
mod kernel {
    use cutile::core::*;

    #[cutile::entry()]
    fn f<const B: i32>(z: &mut Tensor<f32, { [B] }>, x: &Tensor<f32, { [-1] }>, i: i32) {
        let t = x.load_like(z);
        let mut pz = z.partition_mut(const_shape![64]);
        pz.store_unchecked(x.partition(const_shape![64]).load([0i32]), [i]); // ERROR[E0133]: call to unsafe function `store_unchecked`
        let back = pz.load([1i32]); // ERROR[E0133]: call to unsafe function `load`
        unsafe {
            pz.store_unchecked(back, [i]);
            let again = pz.load([0i32]);
            pz.store(again, [1i32]);
        }
    }
}
