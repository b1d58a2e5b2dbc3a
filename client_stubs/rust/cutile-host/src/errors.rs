//! Every error the crate returns, in one enum.
//!
//! A rejected launch is always [`Error::Launch`]: its [`LaunchErrorKind`] has the same name as
//! the Python client's exception class (`client_stubs.errors`), so the shared test vectors
//! (tests/vectors/launch) compare both hosts by kind; nothing reaches the GPU when one is
//! returned.

use std::fmt;

/// What a rejected launch failed on; `name()` is the Python class name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LaunchErrorKind {
    Arity,
    ArgumentKind,
    MovedArgument,
    DTypeMismatch,
    RankMismatch,
    ShapeMismatch,
    TileShapeMismatch,
    MapShapeMismatch,
    NumTileBlocks,
    OutputRank,
    EmptyOutput,
    NegativeStride,
    DeviceMismatch,
    Assumption,
    Overlap,
    SelfOverlap,
    GridMismatch,
    GridLimit,
    LaunchCheck,
    ScalarValue,
    SlotValue,
    TargetMismatch,
    LaunchGrid,
}

impl LaunchErrorKind {
    /// The Python client's exception class for this kind.
    pub fn name(self) -> &'static str {
        use LaunchErrorKind::*;
        match self {
            Arity => "ArityError",
            ArgumentKind => "ArgumentKindError",
            MovedArgument => "MovedArgumentError",
            DTypeMismatch => "DTypeMismatchError",
            RankMismatch => "RankMismatchError",
            ShapeMismatch => "ShapeMismatchError",
            TileShapeMismatch => "TileShapeMismatchError",
            MapShapeMismatch => "MapShapeMismatchError",
            NumTileBlocks => "NumTileBlocksError",
            OutputRank => "OutputRankError",
            EmptyOutput => "EmptyOutputError",
            NegativeStride => "NegativeStrideError",
            DeviceMismatch => "DeviceMismatchError",
            Assumption => "AssumptionError",
            Overlap => "OverlapError",
            SelfOverlap => "SelfOverlapError",
            GridMismatch => "GridMismatchError",
            GridLimit => "GridLimitError",
            LaunchCheck => "LaunchCheckError",
            ScalarValue => "ScalarValueError",
            SlotValue => "SlotValueError",
            TargetMismatch => "TargetMismatchError",
            LaunchGrid => "LaunchGridError",
        }
    }

    /// What was checked, as the error message says it.
    pub fn what(self) -> &'static str {
        use LaunchErrorKind::*;
        match self {
            Arity => "argument count",
            ArgumentKind => "argument kind",
            MovedArgument => "ownership",
            DTypeMismatch => "dtype",
            RankMismatch => "rank",
            ShapeMismatch => "shape",
            TileShapeMismatch => "partition tile shape",
            MapShapeMismatch => "mapped partition map shape",
            NumTileBlocks => "persistent grid size",
            OutputRank => "output rank",
            EmptyOutput => "output extent",
            NegativeStride => "stride sign",
            DeviceMismatch => "device",
            Assumption => "kernel assumption",
            Overlap => "output exclusivity",
            SelfOverlap => "output element disjointness",
            GridMismatch => "grid agreement",
            GridLimit => "grid limit",
            LaunchCheck => "launch check",
            ScalarValue => "scalar value",
            SlotValue => "ABI slot range",
            TargetMismatch => "target",
            LaunchGrid => "launch grid",
        }
    }
}

/// A launch rejected before anything reached the GPU (boxed: the error path stays one
/// pointer wide on the launch path); its fields are [`LaunchErrorInfo`]'s.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LaunchError(Box<LaunchErrorInfo>);

impl std::ops::Deref for LaunchError {
    type Target = LaunchErrorInfo;
    fn deref(&self) -> &LaunchErrorInfo {
        &self.0
    }
}

/// The kernel, the parameter (None for the launch as a whole), what the contract expected
/// and what the caller gave.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LaunchErrorInfo {
    pub kind: LaunchErrorKind,
    pub kernel: String,
    pub param: Option<String>,
    pub expected: String,
    pub actual: String,
    pub detail: String,
}

impl LaunchError {
    pub fn new(
        kind: LaunchErrorKind,
        kernel: &str,
        param: Option<&str>,
        expected: impl Into<String>,
        actual: impl Into<String>,
    ) -> Self {
        LaunchError(Box::new(LaunchErrorInfo {
            kind,
            kernel: kernel.to_string(),
            param: param.map(str::to_string),
            expected: expected.into(),
            actual: actual.into(),
            detail: String::new(),
        }))
    }

    pub fn detail(mut self, detail: impl Into<String>) -> Self {
        self.0.detail = detail.into();
        self
    }
}

impl fmt::Display for LaunchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.kind == LaunchErrorKind::LaunchCheck {
            write!(
                f,
                "kernel `{}`: {} failed: {} must be >= {}",
                self.kernel,
                self.kind.what(),
                self.actual,
                self.expected
            )?;
        } else {
            let place = match &self.param {
                Some(p) => format!("parameter `{p}`"),
                None => "launch".to_string(),
            };
            write!(
                f,
                "kernel `{}`: {place}: {} failed: expected {}, got {}",
                self.kernel,
                self.kind.what(),
                self.expected,
                self.actual
            )?;
        }
        if !self.detail.is_empty() {
            write!(f, " ({})", self.detail)?;
        }
        Ok(())
    }
}

impl std::error::Error for LaunchError {}

/// One diagnostic of a failed compile, as the service sent it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    pub severity: String,
    pub code: String,
    pub message: String,
    /// `source:line:col` of the primary span, when the diagnostic has one.
    pub location: Option<String>,
    /// The service's rustc-style text (or a one-line fallback).
    pub rendered: String,
}

/// The crate's error type.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{0}")]
    Launch(#[from] LaunchError),
    /// A launch contract is malformed, of an unknown schema, or asks for something unsupported.
    #[error("{0}")]
    Contract(String),
    /// A cubin or contract does not match the digest (or signature) it came with.
    #[error("{0}")]
    Integrity(String),
    /// A bundle (manifest + cubins + contracts) is missing or malformed.
    #[error("{0}")]
    Bundle(String),
    /// No bundle entry matches the request.
    #[error("{0}")]
    KernelNotFound(String),
    /// Several bundle entries match the request.
    #[error("{0}")]
    AmbiguousKernel(String),
    /// The service failed the RPC (after retries).
    #[error("compile service error {code}: {message}")]
    Service {
        code: String,
        message: String,
        /// `ErrorInfo.reason` of the rich status, when the server sent one.
        reason: Option<String>,
        /// `BadRequest` field violations as `field: description`.
        violations: Vec<String>,
    },
    /// The service compiled the request and reported errors.
    #[error("compiling `{entry}` failed:\n{}", render_all(.diagnostics))]
    Compile {
        entry: String,
        diagnostics: Vec<Diagnostic>,
    },
    /// A CUDA driver call failed.
    #[error("{call} failed: {name} ({code})")]
    Cuda {
        call: String,
        name: String,
        code: i32,
    },
    /// No CUDA driver or no device on this machine.
    #[error("{0}")]
    NoDevice(String),
    /// A host-side misuse (a wrong shape for a copy, an invalid tile...).
    #[error("{0}")]
    Usage(String),
    #[error("{context}: {source}")]
    Io {
        context: String,
        #[source]
        source: std::io::Error,
    },
}

fn render_all(diagnostics: &[Diagnostic]) -> String {
    if diagnostics.is_empty() {
        return "(no diagnostics)".to_string();
    }
    diagnostics
        .iter()
        .map(|d| d.rendered.as_str())
        .collect::<Vec<_>>()
        .join("\n")
}

impl Error {
    pub(crate) fn io(context: impl Into<String>, source: std::io::Error) -> Self {
        Error::Io {
            context: context.into(),
            source,
        }
    }

    /// The launch error inside, if this is one.
    pub fn as_launch(&self) -> Option<&LaunchError> {
        match self {
            Error::Launch(e) => Some(e),
            _ => None,
        }
    }

    /// The Python client's class name for this error (the test vectors' `kind`).
    pub fn kind_name(&self) -> &'static str {
        match self {
            Error::Launch(e) => e.kind.name(),
            Error::Contract(_) => "ContractError",
            Error::Integrity(_) => "IntegrityError",
            Error::Bundle(_) => "BundleError",
            Error::KernelNotFound(_) => "KernelNotFoundError",
            Error::AmbiguousKernel(_) => "AmbiguousKernelError",
            Error::Service { .. } => "ServiceError",
            Error::Compile { .. } => "CompileError",
            Error::Cuda { .. } => "CudaError",
            Error::NoDevice(_) => "NoDeviceError",
            Error::Usage(_) => "ValueError",
            Error::Io { .. } => "OSError",
        }
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;
