#!/usr/bin/env bash
# Build the Rust host's examples in release mode (stripped) and copy them, with
# run_gpu_examples.sh, into OUT for a GPU machine that has no cargo.
#
#   client_stubs/rust/package_gpu_binaries.sh [OUT]     # default OUT: gpu_artifacts/rust
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="${1:-$here/../../gpu_artifacts/rust}"
mkdir -p "$out"
out="$(cd "$out" && pwd)"  # relative to where it was called, not to $here
cd "$here"
cargo build --locked --release --examples
mkdir -p "$out"
for example in add saxpy gemm softmax flash_attention launch_bench; do
  cp "target/release/examples/$example" "$out/"
done
cp run_gpu_examples.sh "$out/"
du -ch "$out"/* | tail -1
