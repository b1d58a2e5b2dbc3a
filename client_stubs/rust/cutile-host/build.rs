//! Generates the protobuf messages and the tonic client from the repository's `protos/`
//! with protox, a protobuf compiler written in Rust: the build needs no `protoc`.

use std::path::PathBuf;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR")?);
    let repo_protos = manifest.join("../../../protos");
    let vendored = manifest.join("proto");
    let files = [
        repo_protos.join("cutile/compile/v1/contract.proto"),
        repo_protos.join("cutile/compile/v1/compile.proto"),
    ];
    for file in &files {
        println!("cargo:rerun-if-changed={}", file.display());
    }
    println!("cargo:rerun-if-changed={}", vendored.display());
    let descriptors = protox::compile(&files, [&repo_protos, &vendored])?;
    tonic_prost_build::configure()
        .build_server(false)
        .build_transport(true)
        // maps in field order by key: what the request key's serialization needs
        .btree_map(".")
        .extern_path(".google.rpc", "::tonic_types::pb")
        .compile_fds(descriptors)?;
    Ok(())
}
