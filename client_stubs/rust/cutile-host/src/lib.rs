pub mod proto {
    tonic::include_proto!("cutile.compile.v1");
}
