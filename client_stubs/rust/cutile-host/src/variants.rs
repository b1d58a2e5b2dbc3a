//! A kernel built in variants that differ only in their tensor facts (`cutile-compile` builds
//! the general kernel and one for extents and strides divisible by 16 by default): each launch
//! takes the least relaxed, then most specialized variant whose assumptions its arguments meet,
//! as `client_stubs.variants` does, with no choice for the caller to make. The choice is
//! remembered for the last argument layout, so a loop over the same tensors pays one
//! comparison per argument for it.

use std::sync::{Arc, Mutex};

use crate::artifacts::bundle::{serves, Bundle, BundleEntry, Rank};
use crate::errors::{Error, LaunchErrorKind, Result};
use crate::launch::{key_matches, key_of, Args, DeviceOp, Kernel, Key};
use crate::plan::{plan_launch, PlanArg};
use crate::tensor::Stream;

/// The variants of one kernel, best first; see the module docs.
pub struct Variants {
    kernels: Vec<Arc<Kernel>>,
    labels: Vec<String>,
    last: Mutex<Option<Chosen>>,
}

/// The last launch's argument keys, host grid and chosen variant.
type Chosen = (Vec<Key>, Option<[u32; 3]>, usize);

impl Variants {
    /// `variants` as (rank, kernel, label): rank orders them, highest first (see
    /// [`BundleEntry::rank`]: the least relaxed, then the most specialized).
    pub fn new(mut variants: Vec<(Rank, Arc<Kernel>, String)>) -> Result<Variants> {
        if variants.is_empty() {
            return Err(Error::Usage("a kernel needs at least one variant".into()));
        }
        variants.sort_by_key(|v| std::cmp::Reverse(v.0));
        Ok(Variants {
            labels: variants.iter().map(|v| v.2.clone()).collect(),
            kernels: variants.into_iter().map(|v| v.1).collect(),
            last: Mutex::new(None),
        })
    }

    /// The variants, best first.
    pub fn kernels(&self) -> &[Arc<Kernel>] {
        &self.kernels
    }

    /// Each variant's bundle label, best first.
    pub fn labels(&self) -> &[String] {
        &self.labels
    }

    /// The variant these arguments launch (remembered for their layout).
    pub fn choose(&self, args: &Args, grid: Option<[u32; 3]>) -> &Arc<Kernel> {
        if self.kernels.len() == 1 {
            return &self.kernels[0];
        }
        let mut last = self.last.lock().expect("not poisoned");
        if let Some((keys, host_grid, index)) = last.as_ref() {
            if *host_grid == grid
                && keys.len() == args.0.len()
                && keys.iter().zip(&args.0).all(|(k, a)| key_matches(k, a))
            {
                return &self.kernels[*index];
            }
        }
        let index = best_variant(&self.kernels, &args.plan_args(), grid);
        *last = Some((args.0.iter().map(key_of).collect(), grid, index));
        &self.kernels[index]
    }

    /// [`Kernel::launch`] of the chosen variant.
    pub fn launch(&self, stream: &Stream, args: &Args, grid: Option<[u32; 3]>) -> Result<()> {
        self.choose(args, grid).launch(stream, args, grid)
    }

    /// [`Kernel::op`] of the variant these arguments choose.
    pub fn op(&self, args: Args) -> DeviceOp {
        self.choose(&args, None).op(args)
    }

    /// [`Kernel::op_grid`] of the variant these arguments choose.
    pub fn op_grid(&self, args: Args, grid: [u32; 3]) -> DeviceOp {
        self.choose(&args, Some(grid)).op_grid(args, grid)
    }
}

/// The index of the first variant (best first) the arguments may launch: one that plans, or
/// one that refuses them for anything but its own assumptions (every variant refuses those
/// arguments alike, and the launch reports why). The last when all refuse for assumptions.
pub fn best_variant(
    kernels: &[Arc<Kernel>],
    args: &[PlanArg<'_>],
    grid: Option<[u32; 3]>,
) -> usize {
    let host: Option<Vec<i64>> = grid.map(|g| g.iter().map(|&v| v as i64).collect());
    for (index, kernel) in kernels.iter().enumerate() {
        match plan_launch(kernel.spec(), args, host.as_deref()) {
            Err(e) if e.kind == LaunchErrorKind::Assumption => continue,
            Ok(plan) if !serves(kernel.spec(), &plan) => continue,
            _ => return index,
        }
    }
    kernels.len() - 1
}

impl Bundle {
    /// Every variant of `function` with `generics` (on `sm`, in `module`, when given), loaded
    /// and verified, as one launchable kernel. Entries that are not variants of one kernel
    /// (other generics or targets) are ambiguous, as for [`Bundle::find`].
    pub fn kernel(
        &self,
        function: &str,
        generics: &[(&str, &str)],
        sm: Option<&str>,
        module: Option<&str>,
        allow_unchecked: bool,
    ) -> Result<Variants> {
        let candidates = self.candidates(function, generics, sm, module);
        let family = |e: &&BundleEntry| {
            let first = candidates[0];
            e.module == first.module
                && e.sm == first.sm
                && e.generics == first.generics
                && e.function == first.function
        };
        if candidates.is_empty() || !candidates.iter().all(family) {
            self.find(function, generics, sm, module)?; // the not-found or ambiguity error
        }
        let mut variants = Vec::new();
        for entry in candidates {
            let loaded = self.load(entry)?;
            let kernel = Kernel::new(loaded.cubin, &loaded.contract, allow_unchecked)?;
            variants.push((entry.rank(), Arc::new(kernel), entry.label()));
        }
        Variants::new(variants)
    }
}
