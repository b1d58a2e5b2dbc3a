// Row copies that exercise how blocks cut their output, in cuTile Rust's own spellings:
//
//   copy_rows_overhang<N, B>   a block's tile [1, N] cut into [1, B] sub-tiles that need not
//                              divide N (the last one overhangs the row and is masked)
//   copy_rows_dynamic<B>       the rows of each block's slab come from the host's partition
//                              (`[-1, B]`), walked with `num_tiles`
//   scale_rows_owned<BS>       a persistent kernel whose map [1, 0] hands out whole rows (axis
//                              1 OWNED): each row's tiles are walked with a `Dim` and stored
//                              through `coord((row, j))`
//
//   cutile-compile rust_examples/row_copies.rs --entry copy_rows_overhang --generics N=100,B=32

#[cutile::module]
mod kernel {
    use cutile::core::*;

    #[cutile::entry()]
    fn copy_rows_overhang<const N: i32, const B: i32>(
        out: &mut Tensor<f32, { [1, N] }>,
        x: &Tensor<f32, { [-1, N] }>,
    ) {
        let row = get_tile_block_id().0;
        let rows = x.partition(const_shape![1, B]);
        let mut part = out.partition_mut(const_shape![1, B]);
        for j in 0i32..num_tiles(&part, 1) {
            part.store(rows.load([row, j]), [0i32, j]);
        }
    }

    #[cutile::entry()]
    fn copy_rows_dynamic<const B: i32>(
        out: &mut Tensor<f32, { [-1, B] }>,
        x: &Tensor<f32, { [-1, B] }>,
    ) {
        let mut part = out.partition_mut(const_shape![1, B]);
        let rows = num_tiles(&part, 0);
        let first = get_tile_block_id().0 * rows;
        let source = x.partition(const_shape![1, B]);
        for i in 0i32..rows {
            part.store(source.load([first + i, 0i32]), [i, 0i32]);
        }
    }

    #[cutile::entry()]
    fn scale_rows_owned<const BS: i32>(
        mut out: MappedPartitionMut<f32, { [1, BS] }, { [1, 0] }>,
        x: &Tensor<f32, { [-1, -1] }>,
    ) {
        let cols = num_tiles(&out, 1).into_dim();
        let source = x.partition(const_shape![1, BS]);
        let two: Tile<f32, { [1, BS] }> = constant(2.0f32, const_shape![1, BS]);
        for index in out.iter_indices() {
            let (row, _col) = index.components();
            for j in cols {
                out.store(source.load([row, j]) * two, coord((row, j)));
            }
        }
    }
}

fn main() {}
