// entry: generic_rank  generics: S=[1,2,4,8,16]
// The rank comes from a const generic array bound in the request.

#[cutile::module]
mod kernel {
    use cutile::core::*;

    #[cutile::entry()]
    fn generic_rank<const S: [i32; 5]>(
        out: &mut Tensor<f16, S>, // ERROR[CT0201]: partitioned output `out` has rank 5
    ) {
        out.store(out.load());
    }
}
