#!/usr/bin/env bash
# Run the Rust host's prebuilt example binaries on a GPU machine (no cargo, no CUDA toolkit:
# the NVIDIA driver only) against a bundle, printing each example's verdict and the launch
# benchmark's figures.
#
#   run_gpu_examples.sh BIN_DIR BUNDLE_DIR
#
# BIN_DIR holds the binaries package_gpu_binaries.sh made (x86-64 Linux); BUNDLE_DIR is what
# `python -m tests.gpu.build_artifacts` writes (gpu_artifacts/bundle). Exits non-zero when an
# example fails or none ran (no GPU). launch_bench prints MISSED when a target is not met
# (it still exits 0: the figures are the result).
set -u
bin="${1:?usage: run_gpu_examples.sh BIN_DIR BUNDLE_DIR}"
bundle="${2:?usage: run_gpu_examples.sh BIN_DIR BUNDLE_DIR}"
passed=0 failed=0 skipped=0
for example in add saxpy gemm softmax flash_attention launch_bench; do
  "$bin/$example" --bundle "$bundle"
  case $? in
    0) passed=$((passed + 1)) ;;
    3) skipped=$((skipped + 1)) ;;  # no driver or GPU here
    *) failed=$((failed + 1)) ;;
  esac
done
echo "rust host examples: $passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
