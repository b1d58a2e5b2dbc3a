#!/usr/bin/env bash
# Run the Rust host's prebuilt example binaries on a GPU machine (no cargo, no CUDA toolkit:
# the NVIDIA driver only) against a bundle, printing each example's verdict and the launch
# benchmark's figures.
#
#   run_gpu_examples.sh BIN_DIR BUNDLE_DIR
#
# BIN_DIR holds the binaries package_gpu_binaries.sh made (x86-64 Linux); BUNDLE_DIR is what
# `python -m tests.gpu.build_artifacts` writes (gpu_artifacts/bundle). Exits non-zero when an
# example fails.
set -u
bin="${1:?usage: run_gpu_examples.sh BIN_DIR BUNDLE_DIR}"
bundle="${2:?usage: run_gpu_examples.sh BIN_DIR BUNDLE_DIR}"
failed=0
for example in add saxpy gemm softmax flash_attention launch_bench; do
  if ! "$bin/$example" --bundle "$bundle"; then
    failed=$((failed + 1))
  fi
done
echo "rust host examples: $((6 - failed)) passed, $failed failed"
[ "$failed" -eq 0 ]
