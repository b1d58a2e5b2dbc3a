// entry: f  generics: B=128
// Pointers may be passed to a safe device function, but every raw access and assumption
// in it needs an `unsafe` block: `load_ptr_tko`, `store_ptr_tko` and `assume_*` are
// `unsafe fn`s (pointer arithmetic is not).

#[cutile::module]
mod kernel {
    use cutile::core::*;

    fn copy_tile<const N: i32>(dst: *mut f32, src: *const f32, first: i32) {
        let lanes: Tile<i32, { [N] }> = iota(const_shape![N]);
        let idx = lanes + first.broadcast(const_shape![N]);
        let aligned = assume_div_by::<_, 16>(src); // ERROR[E0133]: call to unsafe function `assume_div_by::<_, 16>`
        let v = load_ptr_tko(pointer_to_tile(aligned).offset_tile(idx), ordering::Weak, None, None); // ERROR[E0133]: call to unsafe function `load_ptr_tko`
        store_ptr_tko(pointer_to_tile(dst).offset_tile(idx), v, ordering::Weak, None); // ERROR[E0133]: call to unsafe function `store_ptr_tko`
        unsafe {
            let w = load_ptr_tko(pointer_to_tile(src).offset_tile(idx), ordering::Weak, None, None);
            store_ptr_tko(pointer_to_tile(dst).offset_tile(idx), w, ordering::Weak, None);
        }
    }

    #[cutile::entry()]
    unsafe fn f<const B: i32>(y: *mut f32, x: *const f32) {
        let block = get_tile_block_id().0;
        copy_tile::<B>(y, x, block * B);
    }
}
