// entry: f  generics: B=128
// `dims` lists the `-1` entries of the const generic, or every entry (a constant at a static
// entry must be the type's; a run-time value there is ignored, as in cuTile Rust).

#[cutile::module]
mod kernel {
    use cutile::core::*;

    #[cutile::entry()]
    fn f<const B: i32>(z: &mut Tensor<f32, { [B] }>, x: &Tensor<f32, { [-1] }>, n: i32) {
        let s = Shape::<{ [-1, B] }> { dims: &[n, 64i32] }; // ERROR[E0308]: entry 1 of `dims` must be 128
        let t = Shape::<{ [-1, -1, B] }> { dims: &[n] }; // ERROR[E0308]: has 2 runtime (`-1`) entries, but `dims` lists 1 value
        z.store(x.load_like(z));
    }
}
