// entry: f  generics: MAP=[1, 1]
// `iter_indices()` only drives a `for` loop, and only of a mapped partition.

#[cutile::module]
mod kernel {
    use cutile::core::*;

    #[cutile::entry()]
    fn f<const MAP: [i32; 2]>(
        mut z: MappedPartitionMut<f32, { [64, 64] }, MAP>,
        x: &Tensor<f32, { [-1, -1] }>,
    ) {
        let px = x.partition(const_shape![64, 64]);
        let indices = z.iter_indices(); // ERROR[CT0002]: only supported as the iterator of a `for` loop
        for i in px.iter_indices() { // ERROR[CT0002]: on anything but a `MappedPartitionMut` parameter
        }
        for idx in z.iter_indices() {
            z.store(px.load(idx.coords()), idx);
        }
    }
}
