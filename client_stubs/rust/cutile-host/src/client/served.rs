//! A kernel the service specializes for the arguments it is launched with, as the Python
//! host's `client_stubs.served` does: [`CompileClient::served`] compiles the general kernel;
//! [`Served::kernel_for`] measures the tensor arguments (`facts_for`: what cuTile Rust's JIT
//! infers at launch) and asks the service once per set of facts for the kernel specialized to
//! them (later processes find it in the local cache); a launch of [`MIN_TILE_BLOCKS`] or more
//! tile blocks of an entry that takes an occupancy variant (its contract says so) asks for that
//! variant with the facts. Arguments whose facts say nothing beyond the defaults, in a smaller
//! launch, run the general kernel, without a request; a specialization that fails to compile
//! leaves its arguments on the general kernel (`errors` keeps why). Every launch is checked
//! against the contract of the kernel it runs, like any launch. The choice is remembered for
//! the last argument layouts and host grid (as [`crate::variants::Variants`] remembers its
//! own), so a loop over the same tensors pays one comparison per argument for it: no facts
//! measured, no plan of the general kernel.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use prost::Message;

use crate::artifacts::bundle::tile_blocks;
use crate::client::facts::facts_for;
use crate::client::{CompileClient, Source};
use crate::errors::{Error, Result};
use crate::launch::{plan_key, plan_key_matches, Args, Kernel, Key};
use crate::plan::{plan_launch, PlanArg, TensorLayout};
use crate::tensor::Stream;

/// The occupancy variant's hint, and the launches it serves: the numbers of the Python
/// host's `client_stubs/occupancy.py` (the compiler writes the second into the contract).
pub const OCCUPANCY_VARIANT: u32 = 4;
pub const MIN_TILE_BLOCKS: u64 = 1024;

/// The general kernel and its specializations per measured facts; see the module docs.
pub struct Served {
    client: CompileClient,
    source: Source,
    allow_unchecked: bool,
    general: Arc<Kernel>,
    by_facts: Mutex<HashMap<Vec<u8>, Arc<Kernel>>>,
    last: Mutex<Option<Chosen>>,
    /// Why a specialization did not compile (its arguments run the general kernel).
    pub errors: Mutex<Vec<Error>>,
}

/// The last launch's argument keys, host grid and the kernel they run.
type Chosen = (Vec<Key>, Option<[u32; 3]>, Arc<Kernel>);

impl CompileClient {
    /// `source` compiled through the service as a [`Served`] kernel.
    pub async fn served(&self, source: Source, allow_unchecked: bool) -> Result<Served> {
        let artifact = self.compile(&source).await?;
        let general = Arc::new(Kernel::from_artifact(&artifact, allow_unchecked)?);
        Ok(Served {
            client: self.clone(),
            source,
            allow_unchecked,
            general,
            by_facts: Mutex::new(HashMap::new()),
            last: Mutex::new(None),
            errors: Mutex::new(Vec::new()),
        })
    }
}

impl Served {
    /// The general kernel (no facts).
    pub fn general(&self) -> &Arc<Kernel> {
        &self.general
    }

    /// The specialized kernels compiled so far.
    pub fn specializations(&self) -> Vec<Arc<Kernel>> {
        let known = self.by_facts.lock().expect("not poisoned");
        known
            .values()
            .filter(|k| !Arc::ptr_eq(k, &self.general))
            .cloned()
            .collect()
    }

    /// The kernel a launch with `args` runs: the specialization for their measured facts
    /// (compiled on first sight of those facts), or the general kernel.
    pub async fn kernel_for(&self, args: &Args, grid: Option<[u32; 3]>) -> Arc<Kernel> {
        self.kernel_for_layouts(&args.plan_args(), grid).await
    }

    /// [`Served::kernel_for`] of argument descriptions (no device memory needed).
    pub async fn kernel_for_layouts(
        &self,
        plan_args: &[PlanArg<'_>],
        grid: Option<[u32; 3]>,
    ) -> Arc<Kernel> {
        if let Some(kernel) = self.remembered(plan_args, grid) {
            return kernel;
        }
        let kernel = self.choose(plan_args, grid).await;
        let keys: Option<Vec<Key>> = plan_args.iter().map(plan_key).collect();
        if let Some(keys) = keys {
            *self.last.lock().expect("not poisoned") = Some((keys, grid, kernel.clone()));
        }
        kernel
    }

    /// The kernel the last launch ran, when these are its arguments and host grid.
    fn remembered(&self, plan_args: &[PlanArg<'_>], grid: Option<[u32; 3]>) -> Option<Arc<Kernel>> {
        let last = self.last.lock().expect("not poisoned");
        let (keys, host_grid, kernel) = last.as_ref()?;
        let same = *host_grid == grid
            && keys.len() == plan_args.len()
            && keys
                .iter()
                .zip(plan_args)
                .all(|(k, a)| plan_key_matches(k, a));
        same.then(|| kernel.clone())
    }

    /// The kernel for these arguments: measure their facts and size, ask once per facts.
    async fn choose(&self, plan_args: &[PlanArg<'_>], grid: Option<[u32; 3]>) -> Arc<Kernel> {
        let params = &self.general.spec().params;
        if plan_args.len() != params.len() {
            return self.general.clone(); // its checks say what is wrong
        }
        let tensors: Vec<(&str, &TensorLayout)> = params
            .iter()
            .zip(plan_args)
            .filter(|(p, _)| p.kind.is_tensor())
            .filter_map(|(p, a)| layout_of(a).map(|l| (p.name.as_str(), l)))
            .collect();
        let facts = facts_for(&tensors);
        let occupancy = self.occupancy_for(plan_args, grid);
        if facts.is_empty() && occupancy == 0 {
            return self.general.clone();
        }
        let mut key: Vec<u8> = occupancy.to_le_bytes().to_vec();
        key.extend(facts.iter().flat_map(|f| f.encode_to_vec()));
        let known = self
            .by_facts
            .lock()
            .expect("not poisoned")
            .get(&key)
            .cloned();
        if let Some(kernel) = known {
            return kernel;
        }
        // two launches meeting new facts at once both ask: the service compiles once
        let mut source = self.source.clone();
        source.specialization = facts;
        source.occupancy_variant = occupancy;
        let compiled = match self.client.compile(&source).await {
            Ok(artifact) => Kernel::from_artifact(&artifact, self.allow_unchecked).map(Arc::new),
            Err(e) => Err(e),
        };
        let kernel = compiled.unwrap_or_else(|e| {
            self.errors.lock().expect("not poisoned").push(e);
            self.general.clone()
        });
        let mut known = self.by_facts.lock().expect("not poisoned");
        known.entry(key).or_insert(kernel).clone()
    }

    /// The occupancy variant's hint for a launch of at least [`MIN_TILE_BLOCKS`] tile blocks
    /// (as the general kernel plans it) of an entry that takes one, else 0.
    fn occupancy_for(&self, plan_args: &[PlanArg<'_>], grid: Option<[u32; 3]>) -> u32 {
        let spec = self.general.spec();
        if !spec.takes_occupancy_variant {
            return 0;
        }
        let host: Option<Vec<i64>> = grid.map(|g| g.iter().map(|&v| v as i64).collect());
        match plan_launch(spec, plan_args, host.as_deref()) {
            Ok(plan) if tile_blocks(spec, &plan) >= MIN_TILE_BLOCKS => OCCUPANCY_VARIANT,
            _ => 0,
        }
    }

    /// [`Kernel::launch`] of the kernel these arguments run.
    pub async fn launch(&self, stream: &Stream, args: &Args, grid: Option<[u32; 3]>) -> Result<()> {
        self.kernel_for(args, grid).await.launch(stream, args, grid)
    }
}

fn layout_of<'a>(arg: &PlanArg<'a>) -> Option<&'a TensorLayout> {
    match arg {
        PlanArg::Tensor(layout)
        | PlanArg::Partition { layout, .. }
        | PlanArg::Mapped { layout, .. } => Some(layout),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dtype::{DType, Scalar};
    use crate::plan::Handle;

    fn layout(ptr: u64, n: i64) -> TensorLayout {
        TensorLayout::contiguous(ptr, &[n], DType::F32, 0)
    }

    #[test]
    fn a_key_matches_its_own_argument_and_nothing_else() {
        let (a, b) = (layout(1 << 40, 1024), layout((1 << 40) + 4, 1024));
        let tile: &[i64] = &[128];
        let args = [
            PlanArg::Tensor(&a),
            PlanArg::Partition { layout: &a, tile },
            PlanArg::Mapped {
                layout: &a,
                tile,
                map: &[8, 1],
                num_tile_blocks: 132,
            },
            PlanArg::Scalar(Scalar::Int(7)),
        ];
        for (i, arg) in args.iter().enumerate() {
            let key = plan_key(arg).unwrap();
            for (j, other) in args.iter().enumerate() {
                assert_eq!(
                    plan_key_matches(&key, other),
                    i == j,
                    "{key:?} against {other:?}"
                );
            }
        }
        // another base address, tile, map, block count or value is another layout
        let others = [
            PlanArg::Tensor(&b),
            PlanArg::Partition {
                layout: &a,
                tile: &[256],
            },
            PlanArg::Mapped {
                layout: &a,
                tile,
                map: &[4, 1],
                num_tile_blocks: 132,
            },
            PlanArg::Mapped {
                layout: &a,
                tile,
                map: &[8, 1],
                num_tile_blocks: 264,
            },
            PlanArg::Scalar(Scalar::Int(8)),
        ];
        for (key, other) in args.iter().map(|a| plan_key(a).unwrap()).zip(&others) {
            let other_key = plan_key(other).unwrap();
            assert!(
                !plan_key_matches(&key, other) && key != other_key,
                "{key:?} matched {other:?}"
            );
        }
        // scalars compare by kind and bits: the int 1 is not the float 1.0
        let one = plan_key(&PlanArg::Scalar(Scalar::Int(1))).unwrap();
        assert!(!plan_key_matches(
            &one,
            &PlanArg::Scalar(Scalar::Float(1.0))
        ));
    }

    #[test]
    fn moved_or_foreign_arguments_have_no_key() {
        assert!(plan_key(&PlanArg::Moved(Handle::Tensor)).is_none());
        assert!(plan_key(&PlanArg::Other("str")).is_none());
    }
}
