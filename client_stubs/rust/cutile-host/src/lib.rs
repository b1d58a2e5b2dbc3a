//! The Rust host of cutile-serve: compile cuTile Rust kernels through the service (or read a
//! bundle written by `cutile-compile`), cache the cubin and its launch contract, and launch
//! with every check the contract carries. The GPU machine needs the NVIDIA driver only: the
//! driver library is loaded at run time (cudarc's dynamic loading), nothing links against CUDA.

pub mod artifacts;
pub mod client;
pub mod contract;
pub mod driver;
pub mod dtype;
pub mod errors;
pub mod graph;
pub mod launch;
pub mod minifloat;
pub mod plan;
pub mod tensor;
pub mod variants;

/// The protobuf messages and the gRPC client, generated from `protos/` at build time.
pub mod proto {
    #![allow(clippy::all, missing_docs)]
    tonic::include_proto!("cutile.compile.v1");
}

pub use contract::{validate_contract, ContractSpec};
pub use dtype::{DType, Scalar};
pub use errors::{Error, LaunchError, LaunchErrorKind, Result};
pub use graph::Graph;
pub use launch::{Arg, Args, DeviceOp, Kernel, Pending};
pub use plan::{plan_launch, LaunchPlan, PlanArg, TensorLayout};
pub use tensor::{Device, DeviceTensor, Element, MappedPartition, Partition, Stream};
pub use variants::Variants;
