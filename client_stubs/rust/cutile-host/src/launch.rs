//! `Kernel`: a verified cubin and its launch contract, launched with every check the
//! contract carries ([`crate::plan`]), eagerly on a stream or as a lazy [`DeviceOp`] that
//! hands its arguments back once the GPU work is complete (`.sync()` or `.await`).
//!
//! A repeated launch with the same argument layouts and scalars reuses the checked plan and
//! its packed parameters (planning is a pure function of them), so it costs a comparison and
//! one `cuLaunchKernel`.

use std::ffi::c_void;
use std::future::{Future, IntoFuture};
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use tokio::sync::oneshot;

use crate::artifacts::integrity::sha256_hex;
use crate::contract::{validate_contract, ContractSpec, ParamKind};
use crate::driver::{self, CUfunction, CUstream};
use crate::dtype::Scalar;
use crate::errors::{Error, LaunchError, LaunchErrorKind, Result};
use crate::plan::{plan_launch, PlanArg, TensorLayout};
use crate::proto::LaunchContract;
use crate::tensor::{Device, DeviceTensor, MappedPartition, Partition, Storage, Stream};

/// One launch argument, owned by the launch until its work completes.
#[derive(Debug)]
pub enum Arg {
    /// An input (`&Tensor`), or the pointee of a raw pointer parameter.
    Tensor(Arc<DeviceTensor>),
    /// A `&mut Tensor` output.
    Out(Partition),
    /// A persistent kernel's `MappedPartitionMut` output.
    Mapped(MappedPartition),
    /// A scalar, or a raw pointer parameter's device address (an int).
    Scalar(Scalar),
}

impl From<Arc<DeviceTensor>> for Arg {
    fn from(t: Arc<DeviceTensor>) -> Self {
        Arg::Tensor(t)
    }
}

impl From<&Arc<DeviceTensor>> for Arg {
    fn from(t: &Arc<DeviceTensor>) -> Self {
        Arg::Tensor(t.clone())
    }
}

impl From<Partition> for Arg {
    fn from(p: Partition) -> Self {
        Arg::Out(p)
    }
}

impl From<MappedPartition> for Arg {
    fn from(m: MappedPartition) -> Self {
        Arg::Mapped(m)
    }
}

impl<T: Into<Scalar>> From<T> for Arg {
    fn from(v: T) -> Self {
        Arg::Scalar(v.into())
    }
}

impl Arg {
    fn plan_arg(&self) -> PlanArg<'_> {
        match self {
            Arg::Tensor(t) => PlanArg::Tensor(t.layout()),
            Arg::Out(p) => PlanArg::Partition {
                layout: p.layout(),
                tile: p.tile(),
            },
            Arg::Mapped(m) => PlanArg::Mapped {
                layout: m.partition().layout(),
                tile: m.partition().tile(),
                map: m.map_shape(),
                num_tile_blocks: m.num_tile_blocks(),
            },
            Arg::Scalar(s) => PlanArg::Scalar(*s),
        }
    }

    fn storage(&self) -> Option<&Arc<Storage>> {
        match self {
            Arg::Tensor(t) => Some(t.storage()),
            Arg::Out(p) => Some(p.tensor().storage()),
            Arg::Mapped(m) => Some(m.partition().tensor().storage()),
            Arg::Scalar(_) => None,
        }
    }
}

/// Launch arguments in parameter order; what a completed launch hands back.
#[derive(Debug, Default)]
pub struct Args(pub Vec<Arg>);

/// `args![z.partition(&[128])?, x, y, 2.0f32]`: launch arguments from anything `Into<Arg>`.
#[macro_export]
macro_rules! args {
    ($($a:expr),* $(,)?) => {
        $crate::launch::Args(vec![$($crate::launch::Arg::from($a)),*])
    };
}

impl Args {
    fn take(&mut self, index: usize) -> Result<Arg> {
        let slot = self
            .0
            .get_mut(index)
            .ok_or_else(|| Error::Usage(format!("no argument {index}")))?;
        Ok(std::mem::replace(slot, Arg::Scalar(Scalar::Int(0))))
    }

    /// The output partition at `index` (moved out of the arguments).
    pub fn out(&mut self, index: usize) -> Result<Partition> {
        match self.take(index)? {
            Arg::Out(p) => Ok(p),
            Arg::Mapped(m) => Ok(m.unmap()),
            other => Err(Error::Usage(format!(
                "argument {index} is no output: {other:?}"
            ))),
        }
    }

    /// The input tensor at `index`.
    pub fn tensor(&mut self, index: usize) -> Result<Arc<DeviceTensor>> {
        match self.take(index)? {
            Arg::Tensor(t) => Ok(t),
            other => Err(Error::Usage(format!(
                "argument {index} is no tensor: {other:?}"
            ))),
        }
    }

    pub(crate) fn plan_args(&self) -> Vec<PlanArg<'_>> {
        self.0.iter().map(Arg::plan_arg).collect()
    }

    fn storages(&self) -> impl Iterator<Item = Arc<Storage>> + '_ {
        self.0.iter().filter_map(|a| a.storage().cloned())
    }
}

/// What a checked plan depends on, per argument: compared to reuse the plan.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Key {
    Tensor(TensorLayout, Vec<i64>, Vec<i64>, i64),
    Scalar(u8, u128),
}

pub(crate) fn key_of(arg: &Arg) -> Key {
    plan_key(&arg.plan_arg()).expect("a launch argument has a key")
}

pub(crate) fn key_matches(key: &Key, arg: &Arg) -> bool {
    plan_key_matches(key, &arg.plan_arg())
}

/// The key of an argument described for planning; None for what no launch takes (a moved
/// handle, a foreign object): nothing is remembered for those.
pub(crate) fn plan_key(arg: &PlanArg<'_>) -> Option<Key> {
    Some(match arg {
        PlanArg::Tensor(layout) => Key::Tensor((*layout).clone(), Vec::new(), Vec::new(), 0),
        PlanArg::Partition { layout, tile } => {
            Key::Tensor((*layout).clone(), tile.to_vec(), Vec::new(), -1)
        }
        PlanArg::Mapped {
            layout,
            tile,
            map,
            num_tile_blocks,
        } => Key::Tensor(
            (*layout).clone(),
            tile.to_vec(),
            map.to_vec(),
            *num_tile_blocks,
        ),
        PlanArg::Scalar(value) => scalar_key(value),
        PlanArg::Moved(_) | PlanArg::Other(_) => return None,
    })
}

fn scalar_key(value: &Scalar) -> Key {
    match value {
        Scalar::Bool(b) => Key::Scalar(0, *b as u128),
        Scalar::Int(i) => Key::Scalar(1, *i as u128),
        Scalar::Float(f) => Key::Scalar(2, f.to_bits() as u128),
    }
}

/// Whether `arg` is the argument `key` was taken of (no allocation for tensors).
pub(crate) fn plan_key_matches(key: &Key, arg: &PlanArg<'_>) -> bool {
    match (key, arg) {
        (Key::Tensor(l, t, m, n), PlanArg::Tensor(x)) => {
            t.is_empty() && m.is_empty() && *n == 0 && l == *x
        }
        (Key::Tensor(l, t, m, n), PlanArg::Partition { layout, tile }) => {
            *n == -1 && m.is_empty() && t.as_slice() == *tile && l == *layout
        }
        (
            Key::Tensor(l, t, m, n),
            PlanArg::Mapped {
                layout,
                tile,
                map,
                num_tile_blocks,
            },
        ) => n == num_tile_blocks && m.as_slice() == *map && t.as_slice() == *tile && l == *layout,
        (Key::Scalar(..), PlanArg::Scalar(value)) => *key == scalar_key(value),
        _ => false,
    }
}

/// A checked plan with its kernelParams array (one pointer per slot into `buffer`).
struct Prepared {
    keys: Vec<Key>,
    grid: [u32; 3],
    host_grid: Option<[u32; 3]>,
    buffer: Vec<u8>,
    params: Vec<*mut c_void>,
}

// SAFETY: the raw pointers point into `buffer`, which moves with the value.
unsafe impl Send for Prepared {}

/// A launchable kernel; see the module docs.
pub struct Kernel {
    spec: ContractSpec,
    cubin: Vec<u8>,
    sha256: String,
    functions: Mutex<Vec<(usize, usize)>>,
    memo: Mutex<Option<Prepared>>,
}

impl std::fmt::Debug for Kernel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Kernel({}, {}, sha256={})",
            self.name(),
            self.spec.sm,
            &self.sha256[..12]
        )
    }
}

/// The host architecture as the contract spells it.
pub fn host_arch() -> &'static str {
    std::env::consts::ARCH
}

impl Kernel {
    /// A kernel of `cubin` and `contract`. `allow_unchecked` must be true for a kernel
    /// compiled with unchecked accesses or taking raw pointers (nothing bounds their
    /// accesses: the caller promises them).
    pub fn new(cubin: Vec<u8>, contract: &LaunchContract, allow_unchecked: bool) -> Result<Kernel> {
        let spec = validate_contract(contract)?;
        let name = spec.name().to_string();
        if spec.unchecked_accesses && !allow_unchecked {
            return Err(Error::Contract(format!(
                "kernel `{name}` was compiled with unchecked accesses; pass allow_unchecked to launch it"
            )));
        }
        let raw = spec.raw_pointers();
        if !raw.is_empty() && !allow_unchecked {
            let names: Vec<String> = raw.iter().map(|n| format!("`{n}`")).collect();
            return Err(Error::Contract(format!(
                "kernel `{name}` takes raw pointers ({}) whose accesses are not bounds-checked; \
                 pass allow_unchecked to launch it",
                names.join(", ")
            )));
        }
        Ok(Kernel {
            sha256: sha256_hex(&cubin),
            cubin,
            spec,
            functions: Mutex::new(Vec::new()),
            memo: Mutex::new(None),
        })
    }

    /// The kernel of a verified artifact (from the service, the cache or a bundle).
    pub fn from_artifact(
        artifact: &crate::proto::Artifact,
        allow_unchecked: bool,
    ) -> Result<Kernel> {
        let contract = artifact
            .contract
            .as_ref()
            .ok_or_else(|| Error::Contract("the artifact carries no contract".into()))?;
        Kernel::new(artifact.cubin.clone(), contract, allow_unchecked)
    }

    pub fn name(&self) -> &str {
        self.spec.name()
    }

    pub fn spec(&self) -> &ContractSpec {
        &self.spec
    }

    /// Check `args` (and, for a host-grid kernel, `grid`) without launching: no GPU needed.
    pub fn check(&self, args: &Args, grid: Option<[u32; 3]>) -> Result<crate::plan::LaunchPlan> {
        let host: Option<Vec<i64>> = grid.map(|g| g.iter().map(|&v| v as i64).collect());
        Ok(plan_launch(&self.spec, &args.plan_args(), host.as_deref())?)
    }

    /// The loaded, verified function for `device` (loaded once per context).
    fn function(&self, device: &Device) -> Result<CUfunction> {
        let ctx = device.ctx() as usize;
        let mut loaded = self.functions.lock().expect("not poisoned");
        if let Some(&(_, f)) = loaded.iter().find(|(c, _)| *c == ctx) {
            return Ok(f as CUfunction);
        }
        self.check_target(device)?;
        device.bind()?;
        let (_module, function) = driver::load_function(&self.cubin, &self.spec.entry_symbol)?;
        let expected: Vec<(usize, usize)> =
            self.spec.slots.iter().map(|s| (s.offset, s.size)).collect();
        if let Some(actual) = driver::param_layout(function, expected.len()) {
            if actual != expected {
                return Err(Error::Contract(format!(
                    "kernel `{}`: the cubin's parameter layout {actual:?} does not match the contract's ABI {expected:?}",
                    self.name()
                )));
            }
        }
        loaded.push((ctx, function as usize));
        Ok(function)
    }

    fn check_target(&self, device: &Device) -> Result<()> {
        let name = self.name();
        if !self.spec.host_arch.is_empty() && self.spec.host_arch != host_arch() {
            return Err(LaunchError::new(
                LaunchErrorKind::TargetMismatch,
                name,
                None,
                format!("host arch {}", self.spec.host_arch),
                format!("host arch {}", host_arch()),
            )
            .detail(format!(
                "the cubin embeds host code; compile with host_arch {:?}",
                host_arch()
            ))
            .into());
        }
        if !self.spec.sm.is_empty() && self.spec.sm != device.sm() {
            return Err(LaunchError::new(
                LaunchErrorKind::TargetMismatch,
                name,
                None,
                self.spec.sm.clone(),
                format!("{} (device {})", device.sm(), device.ordinal()),
            )
            .into());
        }
        Ok(())
    }

    /// Check and launch on `stream`, borrowing the arguments: the stream keeps their memory
    /// alive until it is synchronized, and host copies order after the work. The eager form
    /// (cutile-rs's `launch`); [`Kernel::op`] owns its arguments instead.
    pub fn launch(&self, stream: &Stream, args: &Args, grid: Option<[u32; 3]>) -> Result<()> {
        self.issue(stream, args, grid)?;
        stream.keep(args.storages())
    }

    fn device_of(args: &Args, stream: &Stream) -> Device {
        args.0
            .iter()
            .find_map(|a| a.storage().map(|s| s.device().clone()))
            .unwrap_or_else(|| stream.device().clone())
    }

    /// The hot path: reuse or make the checked plan, order after other streams' work on the
    /// same memory, `cuLaunchKernel`.
    fn issue(&self, stream: &Stream, args: &Args, grid: Option<[u32; 3]>) -> Result<()> {
        let device = Self::device_of(args, stream);
        let function = self.function(&device)?;
        device.bind()?;
        for arg in &args.0 {
            if let Some(storage) = arg.storage() {
                storage.enter(stream.raw())?;
            }
        }
        let mut memo = self.memo.lock().expect("not poisoned");
        let reusable = memo.as_ref().is_some_and(|p| {
            p.host_grid == grid
                && p.keys.len() == args.0.len()
                && p.keys.iter().zip(&args.0).all(|(k, a)| key_matches(k, a))
        });
        if !reusable {
            *memo = Some(self.prepare(args, grid)?);
        }
        let prepared = memo.as_mut().expect("prepared above");
        let launch = if self.spec.waits_for_prior_grids && driver::early_launch_allowed() {
            driver::launch_early // the kernel waits for prior grids before touching memory
        } else {
            driver::launch
        };
        // SAFETY: `params` holds one pointer per ABI slot into `buffer`, packed and checked
        // against the contract, whose layout matched the cubin's when it was loaded.
        unsafe {
            launch(
                function,
                prepared.grid,
                self.spec.block,
                self.spec.shared_mem_bytes,
                stream.raw(),
                prepared.params.as_mut_ptr(),
            )
        }
    }

    fn prepare(&self, args: &Args, grid: Option<[u32; 3]>) -> Result<Prepared> {
        let plan = self.check(args, grid)?;
        let mut prepared = Prepared {
            keys: args.0.iter().map(key_of).collect(),
            grid: plan.grid,
            host_grid: grid,
            buffer: plan.param_buffer,
            params: Vec::new(),
        };
        let base = prepared.buffer.as_mut_ptr();
        prepared.params = self
            .spec
            .slots
            .iter()
            // SAFETY: every slot lies inside the buffer (validated by the contract).
            .map(|s| unsafe { base.add(s.offset) } as *mut c_void)
            .collect();
        Ok(prepared)
    }

    /// This launch as a lazy operation owning its arguments; see [`DeviceOp`].
    pub fn op(self: &Arc<Self>, args: Args) -> DeviceOp {
        DeviceOp {
            steps: vec![Step::Launch(self.clone(), args, None)],
        }
    }

    /// [`Kernel::op`] for a kernel whose grid no output defines (raw pointers).
    pub fn op_grid(self: &Arc<Self>, args: Args, grid: [u32; 3]) -> DeviceOp {
        DeviceOp {
            steps: vec![Step::Launch(self.clone(), args, Some(grid))],
        }
    }

    /// The checked launch as bare driver arguments, for measuring this crate's cost against
    /// a raw `cuLaunchKernel` of the same function (examples/launch_bench.rs).
    #[doc(hidden)]
    pub fn raw_launch(
        &self,
        stream: &Stream,
        args: &Args,
        grid: Option<[u32; 3]>,
    ) -> Result<RawLaunch> {
        let device = Self::device_of(args, stream);
        let function = self.function(&device)?;
        let prepared = self.prepare(args, grid)?;
        Ok(RawLaunch {
            function: function as usize,
            grid: prepared.grid,
            block: self.spec.block,
            shared_mem_bytes: self.spec.shared_mem_bytes,
            prepared,
        })
    }

    /// The param kinds of the contract, in order (for callers building arguments).
    pub fn param_kinds(&self) -> Vec<(String, ParamKind)> {
        self.spec
            .params
            .iter()
            .map(|p| (p.name.clone(), p.kind))
            .collect()
    }
}

/// A checked launch as bare driver arguments (see [`Kernel::raw_launch`]).
#[doc(hidden)]
pub struct RawLaunch {
    function: usize,
    grid: [u32; 3],
    block: [u32; 3],
    shared_mem_bytes: u32,
    prepared: Prepared,
}

impl RawLaunch {
    /// `cuLaunchKernel` with the prepared parameters and nothing else.
    ///
    /// # Safety
    /// The arguments this was made from outlive the work, and `stream` is their device's.
    pub unsafe fn launch(&mut self, stream: &Stream) -> Result<()> {
        driver::launch(
            self.function as CUfunction,
            self.grid,
            self.block,
            self.shared_mem_bytes,
            stream.raw(),
            self.prepared.params.as_mut_ptr(),
        )
    }
}

type Then = Box<dyn FnOnce(Args) -> Result<DeviceOp> + Send>;

enum Step {
    Launch(Arc<Kernel>, Args, Option<[u32; 3]>),
    Then(Then),
}

/// Lazy GPU work: nothing runs until `.sync(&stream)`, `.on(&stream).await` or `.await`
/// (a pooled stream), or a graph capture; the arguments of the last launch come back when
/// the work is complete.
pub struct DeviceOp {
    steps: Vec<Step>,
}

impl DeviceOp {
    /// An op that launches nothing: awaiting it waits for the stream's earlier work.
    pub(crate) fn marker() -> DeviceOp {
        DeviceOp { steps: Vec::new() }
    }

    /// Load (and verify) the kernels of the op's direct launches on `device` before a graph
    /// capture, so no module is loaded while the stream captures.
    pub(crate) fn preload(&self, device: &Device) -> Result<()> {
        for step in &self.steps {
            if let Step::Launch(kernel, _, _) = step {
                kernel.function(device)?;
            }
        }
        Ok(())
    }

    /// This op, then `next` on the same stream (stream order makes the chain safe).
    pub fn then(mut self, next: DeviceOp) -> DeviceOp {
        self.steps.extend(next.steps);
        self
    }

    /// This op, then the op `next` makes of its results (to pass outputs along).
    pub fn then_with(
        mut self,
        next: impl FnOnce(Args) -> Result<DeviceOp> + Send + 'static,
    ) -> DeviceOp {
        self.steps.push(Step::Then(Box::new(next)));
        self
    }

    /// Issue every launch on `stream`; the results and the memory to keep until complete.
    pub(crate) fn issue(self, stream: &Stream) -> Result<(Args, Vec<Arc<Storage>>)> {
        let mut results = Args::default();
        let mut keep: Vec<Arc<Storage>> = Vec::new();
        let mut steps: std::collections::VecDeque<Step> = self.steps.into();
        while let Some(step) = steps.pop_front() {
            match step {
                Step::Launch(kernel, args, grid) => {
                    kernel.issue(stream, &args, grid)?;
                    keep.extend(args.storages());
                    results = args;
                }
                Step::Then(next) => {
                    let op = next(std::mem::take(&mut results))?;
                    for (i, s) in op.steps.into_iter().enumerate() {
                        steps.insert(i, s);
                    }
                }
            }
        }
        Ok((results, keep))
    }

    /// Run on `stream`, wait on the host, hand the arguments back.
    pub fn sync(self, stream: &Stream) -> Result<Args> {
        self.start(stream)?.sync()
    }

    /// Issue on `stream` now; the returned [`Pending`] completes with the arguments.
    pub fn start(self, stream: &Stream) -> Result<Pending> {
        let (args, keep) = match self.issue(stream) {
            Ok(issued) => issued,
            Err(e) => {
                let _ = stream.synchronize(); // what was launched before the failure finishes
                return Err(e);
            }
        };
        Ok(Pending {
            device: stream.device().clone(),
            stream: stream.raw() as usize,
            args: Some(args),
            keep,
            waiter: None,
        })
    }

    /// Bind to `stream` for `.await`.
    pub fn on(self, stream: &Stream) -> OnStream<'_> {
        OnStream { op: self, stream }
    }

    fn device(&self) -> Option<Device> {
        self.steps.iter().find_map(|s| match s {
            Step::Launch(_, args, _) => args
                .0
                .iter()
                .find_map(|a| a.storage().map(|s| s.device().clone())),
            Step::Then(_) => None,
        })
    }
}

/// An op bound to a stream, to `.await`.
pub struct OnStream<'a> {
    op: DeviceOp,
    stream: &'a Stream,
}

impl<'a> IntoFuture for OnStream<'a> {
    type Output = Result<Args>;
    type IntoFuture = Pin<Box<dyn Future<Output = Result<Args>> + Send + 'a>>;

    fn into_future(self) -> Self::IntoFuture {
        let started = self.op.start(self.stream);
        Box::pin(async move { started?.await })
    }
}

impl IntoFuture for DeviceOp {
    type Output = Result<Args>;
    type IntoFuture = Pin<Box<dyn Future<Output = Result<Args>> + Send>>;

    /// Run on the next pooled stream of the arguments' device.
    fn into_future(self) -> Self::IntoFuture {
        let device = match self.device().map(Ok).unwrap_or_else(|| Device::new(0)) {
            Ok(d) => d,
            Err(e) => return Box::pin(async move { Err(e) }),
        };
        let started = device.pooled_stream().and_then(|s| self.start(s));
        Box::pin(async move { started?.await })
    }
}

/// How long `.await` asks the stream before parking on a host function: a tiny kernel is
/// done within a few microseconds, and noticing it costs what `.sync()` costs; a long one
/// costs at most this much of one core before the task sleeps.
pub const SPIN: Duration = Duration::from_micros(20);

/// Issued work holding its arguments: `.sync()` waits on the host, `.await` without blocking
/// the executor (a bounded query of the stream, then a CUDA host function wakes a oneshot:
/// no thread per launch, no polling loop). Dropped unfinished, it waits (the memory must
/// outlive the work).
pub struct Pending {
    device: Device,
    stream: usize,
    args: Option<Args>,
    keep: Vec<Arc<Storage>>,
    waiter: Option<oneshot::Receiver<()>>,
}

unsafe extern "C" fn wake(user: *mut c_void) {
    // SAFETY: `user` is the Box this module leaked for exactly one callback.
    let sender = unsafe { Box::from_raw(user as *mut oneshot::Sender<()>) };
    let _ = sender.send(()); // no CUDA call here: the driver forbids it
}

impl Pending {
    fn stream(&self) -> CUstream {
        self.stream as CUstream
    }

    /// Whether the work has finished (one query).
    pub fn is_done(&self) -> Result<bool> {
        self.device.bind()?;
        driver::stream_done(self.stream())
    }

    /// Wait on the host and hand the arguments back.
    pub fn sync(mut self) -> Result<Args> {
        self.device.bind()?;
        driver::synchronize(self.stream())?;
        self.keep.clear();
        Ok(self.args.take().unwrap_or_default())
    }

    fn finish(&mut self) -> Poll<Result<Args>> {
        self.keep.clear();
        self.waiter = None;
        Poll::Ready(Ok(self.args.take().unwrap_or_default()))
    }
}

impl Future for Pending {
    type Output = Result<Args>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<Args>> {
        let this = self.get_mut();
        if this.args.is_none() {
            return Poll::Ready(Err(Error::Usage("this Pending already completed".into())));
        }
        if this.waiter.is_none() {
            if let Err(e) = this.device.bind() {
                return Poll::Ready(Err(e));
            }
            let deadline = Instant::now() + SPIN;
            loop {
                match driver::stream_done(this.stream()) {
                    Ok(true) => return this.finish(),
                    Ok(false) if Instant::now() < deadline => std::hint::spin_loop(),
                    Ok(false) => break,
                    Err(e) => return Poll::Ready(Err(e)),
                }
            }
            let (sender, receiver) = oneshot::channel::<()>();
            let user = Box::into_raw(Box::new(sender)) as *mut c_void;
            // SAFETY: `wake` frees `user` when it runs, exactly once.
            if let Err(e) = unsafe { driver::launch_host_func(this.stream(), wake, user) } {
                // SAFETY: the callback was not enqueued, so the box is still ours.
                drop(unsafe { Box::from_raw(user as *mut oneshot::Sender<()>) });
                return Poll::Ready(Err(e));
            }
            this.waiter = Some(receiver);
        }
        let waiter = this.waiter.as_mut().expect("set above");
        match Pin::new(waiter).poll(cx) {
            Poll::Ready(_) => this.finish(),
            Poll::Pending => Poll::Pending,
        }
    }
}

impl Drop for Pending {
    fn drop(&mut self) {
        if self.args.is_some() || !self.keep.is_empty() {
            let _ = self.device.bind();
            let _ = driver::synchronize(self.stream());
        }
    }
}
