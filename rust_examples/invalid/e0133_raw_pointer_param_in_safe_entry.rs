// entry: f  generics: B=128
// A raw pointer reaches memory no bounds check covers: only an `unsafe fn` entry may take
// one (cuTile Rust: "Pointers can only be used in unsafe kernel entry points").

#[cutile::module]
mod kernel {
    use cutile::core::*;

    #[cutile::entry()]
    fn f<const B: i32>(
        y: *mut f32, // ERROR[E0133]: raw pointer parameter `y` requires an `unsafe fn` entry
        n: i32,
    ) {
        let idx: Tile<i32, { [B] }> = iota(const_shape![B]);
        let ptrs = pointer_to_tile(y).offset_tile(idx);
    }
}
