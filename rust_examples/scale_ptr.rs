// y[i] = a * x[i] through raw pointers: tile block b handles elements b*B .. b*B + B,
// masked against `len`. Raw pointers need an `unsafe fn` entry and the alignment
// assumption needs `unsafe`; the raw loads and stores are safe to call (as in cuTile
// Rust) but nothing bounds-checks them, so the contract marks the kernel unchecked: the
// host must launch ceil(len / B) blocks over buffers of at least `len` elements
// (`kernel(y, x, a, len, grid=(blocks, 1, 1))`, with `allow_unchecked=True`).
//
//   cutile-compile rust_examples/scale_ptr.rs --entry scale_ptr --generics B=1024 -o build/

#[cutile::module]
mod kernel {
    use cutile::core::*;

    #[cutile::entry()]
    unsafe fn scale_ptr<const B: i32>(y: *mut f32, x: *const f32, a: f32, len: i32) {
        let x: *const f32 = assume_div_by::<_, 16>(x);
        let y: *mut f32 = assume_div_by::<_, 16>(y);
        let block = get_tile_block_id().0;
        let lanes: Tile<i32, { [B] }> = iota(const_shape![B]);
        let idx = lanes + (block * B).broadcast(const_shape![B]);
        let inside = lt_tile(idx, len.broadcast(const_shape![B]));
        let (xs, _read): (Tile<f32, { [B] }>, Token) = load_ptr_tko(
            pointer_to_tile(x).offset_tile(idx),
            ordering::Weak,
            None::<scope::TileBlock>,
            Some(inside),
            Some(0.0f32),
            None,
            Latency::<0>,
        );
        let scaled = xs * a.broadcast(const_shape![B]);
        store_ptr_tko(
            pointer_to_tile(y).offset_tile(idx),
            scaled,
            ordering::Weak,
            None::<scope::TileBlock>,
            Some(inside),
            None,
            Latency::<0>,
        );
    }
}
