// entry: f  generics: B=128
// Pointers may be passed to a safe device function, but an assumption in it needs an
// `unsafe` block: `assume_*` are `unsafe fn`s (nothing checks them). The raw loads and
// stores themselves are safe to call, as in cuTile Rust: outside `unsafe` they only warn
// (CT0302), and the kernel's contract is marked unchecked either way.

#[cutile::module]
mod kernel {
    use cutile::core::*;

    fn copy_tile<const N: i32>(dst: *mut f32, src: *const f32, first: i32) {
        let lanes: Tile<i32, { [N] }> = iota(const_shape![N]);
        let idx = lanes + first.broadcast(const_shape![N]);
        let aligned = assume_div_by::<_, 16>(src); // ERROR[E0133]: call to unsafe function `assume_div_by::<_, 16>`
        let (v, _t): (Tile<f32, { [N] }>, Token) = load_ptr_tko(
            pointer_to_tile(aligned).offset_tile(idx),
            ordering::Weak,
            None::<scope::TileBlock>,
            None,
            None,
            None,
            Latency::<0>,
        );
        unsafe {
            store_ptr_tko(
                pointer_to_tile(dst).offset_tile(idx),
                v,
                ordering::Weak,
                None::<scope::TileBlock>,
                None,
                None,
                Latency::<0>,
            );
        }
    }

    #[cutile::entry()]
    unsafe fn f<const B: i32>(y: *mut f32, x: *const f32) {
        let block = get_tile_block_id().0;
        copy_tile::<B>(y, x, block * B);
    }
}
