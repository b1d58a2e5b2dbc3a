//! A kernel the service specializes for the arguments it is launched with, as the Python
//! host's `client_stubs.served` does: [`CompileClient::served`] compiles the general kernel;
//! [`Served::kernel_for`] measures the tensor arguments (`facts_for`: what cuTile Rust's JIT
//! infers at launch) and asks the service once per set of facts for the kernel specialized to
//! them (later processes find it in the local cache). Arguments whose facts say nothing beyond
//! the defaults run the general kernel, without a request; a specialization that fails to
//! compile leaves its arguments on the general kernel (`errors` keeps why). Every launch is
//! checked against the contract of the kernel it runs, like any launch.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use prost::Message;

use crate::client::facts::facts_for;
use crate::client::{CompileClient, Source};
use crate::errors::{Error, Result};
use crate::launch::{Args, Kernel};
use crate::plan::{PlanArg, TensorLayout};
use crate::tensor::Stream;

/// The general kernel and its specializations per measured facts; see the module docs.
pub struct Served {
    client: CompileClient,
    source: Source,
    allow_unchecked: bool,
    general: Arc<Kernel>,
    by_facts: Mutex<HashMap<Vec<u8>, Arc<Kernel>>>,
    /// Why a specialization did not compile (its arguments run the general kernel).
    pub errors: Mutex<Vec<Error>>,
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
    pub async fn kernel_for(&self, args: &Args) -> Arc<Kernel> {
        self.kernel_for_layouts(&args.plan_args()).await
    }

    /// [`Served::kernel_for`] of argument descriptions (no device memory needed).
    pub async fn kernel_for_layouts(&self, plan_args: &[PlanArg<'_>]) -> Arc<Kernel> {
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
        if facts.is_empty() {
            return self.general.clone();
        }
        let key: Vec<u8> = facts.iter().flat_map(|f| f.encode_to_vec()).collect();
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

    /// [`Kernel::launch`] of the kernel these arguments run.
    pub async fn launch(&self, stream: &Stream, args: &Args, grid: Option<[u32; 3]>) -> Result<()> {
        self.kernel_for(args).await.launch(stream, args, grid)
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
