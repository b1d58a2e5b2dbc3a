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
use crate::dtype::Scalar;
use crate::errors::{Error, Result};
use crate::launch::{Args, Kernel};
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

/// The last launch's argument layouts, host grid and the kernel they run.
type Chosen = (Vec<ArgKey>, Option<[u32; 3]>, Arc<Kernel>);

/// One launch argument as the choice of kernel depends on it, owned (compared, not hashed:
/// a float scalar may be NaN, which matches nothing and only costs a fresh choice).
#[derive(Clone, Debug, PartialEq)]
enum ArgKey {
    Tensor(TensorLayout),
    Partition(TensorLayout, Vec<i64>),
    Mapped(TensorLayout, Vec<i64>, Vec<i64>, i64),
    Scalar(Scalar),
}

impl ArgKey {
    /// The key of `arg`; None for what no launch takes (a moved handle, a foreign object):
    /// such arguments are never remembered.
    fn of(arg: &PlanArg<'_>) -> Option<ArgKey> {
        Some(match arg {
            PlanArg::Tensor(layout) => ArgKey::Tensor((*layout).clone()),
            PlanArg::Partition { layout, tile } => {
                ArgKey::Partition((*layout).clone(), tile.to_vec())
            }
            PlanArg::Mapped {
                layout,
                tile,
                map,
                num_tile_blocks,
            } => ArgKey::Mapped(
                (*layout).clone(),
                tile.to_vec(),
                map.to_vec(),
                *num_tile_blocks,
            ),
            PlanArg::Scalar(value) => ArgKey::Scalar(*value),
            PlanArg::Moved(_) | PlanArg::Other(_) => return None,
        })
    }

    /// Whether `arg` is the argument this key was taken of (no allocation).
    fn matches(&self, arg: &PlanArg<'_>) -> bool {
        match (self, arg) {
            (ArgKey::Tensor(l), PlanArg::Tensor(x)) => l == *x,
            (ArgKey::Partition(l, t), PlanArg::Partition { layout, tile }) => {
                l == *layout && t.as_slice() == *tile
            }
            (
                ArgKey::Mapped(l, t, m, n),
                PlanArg::Mapped {
                    layout,
                    tile,
                    map,
                    num_tile_blocks,
                },
            ) => {
                l == *layout
                    && t.as_slice() == *tile
                    && m.as_slice() == *map
                    && n == num_tile_blocks
            }
            (ArgKey::Scalar(v), PlanArg::Scalar(x)) => v == x,
            _ => false,
        }
    }
}

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
        let keys: Option<Vec<ArgKey>> = plan_args.iter().map(ArgKey::of).collect();
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
            && keys.iter().zip(plan_args).all(|(k, a)| k.matches(a));
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
    use crate::dtype::DType;
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
            let key = ArgKey::of(arg).unwrap();
            for (j, other) in args.iter().enumerate() {
                assert_eq!(key.matches(other), i == j, "{key:?} against {other:?}");
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
        for (key, other) in args.iter().map(|a| ArgKey::of(a).unwrap()).zip(&others) {
            let other_key = ArgKey::of(other).unwrap();
            assert!(
                !key.matches(other) && key != other_key,
                "{key:?} matched {other:?}"
            );
        }
        let nan = ArgKey::of(&PlanArg::Scalar(Scalar::Float(f64::NAN))).unwrap();
        assert!(!nan.matches(&PlanArg::Scalar(Scalar::Float(f64::NAN))));
    }

    #[test]
    fn moved_or_foreign_arguments_have_no_key() {
        assert!(ArgKey::of(&PlanArg::Moved(Handle::Tensor)).is_none());
        assert!(ArgKey::of(&PlanArg::Other("str")).is_none());
    }
}
