//! Check a launch's arguments against a contract and pack its parameter buffer, without a
//! GPU: the Rust twin of `client_stubs.plan.plan_launch`, check for check and in the same
//! order (the shared vectors in tests/vectors/launch hold both to it).
//!
//! Each argument is bound to its contract param (kind, dtype, rank, shapes, output tiles,
//! mapped-partition map and grid), then the contract's assumptions are checked in contract
//! order, outputs must not overlap anything, the grid is derived (from the partitioned
//! outputs, a persistent kernel's `num_tile_blocks`, or the caller's grid for a raw-pointer
//! kernel), the cluster size must divide a host or persistent grid, every hoisted launch
//! check `lhs <= rhs` must hold, an output-derived grid is scaled to CTAs by the cluster
//! size, and the ABI slots are packed.

use crate::contract::{
    py_list, py_tuple, AssumptionKind, AssumptionSpec, ContractSpec, LaunchCheckSpec, ParamKind,
    ParamSpec, Role,
};
use crate::dtype::{pack_ctype, Class, DType, Scalar};
use crate::errors::{LaunchError, LaunchErrorKind as K};

pub const I32_MAX: i128 = (1 << 31) - 1;
/// cuLaunchKernel's gridDim limits.
pub const GRID_LIMITS: [i128; 3] = [I32_MAX, 65535, 65535];

/// Where a tensor's elements are: pointer, shape, strides (in elements), dtype, device.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TensorLayout {
    pub ptr: u64,
    pub shape: Vec<i64>,
    pub strides: Vec<i64>,
    pub dtype: DType,
    pub device: i32,
}

impl TensorLayout {
    /// A layout with row-major strides.
    pub fn contiguous(ptr: u64, shape: &[i64], dtype: DType, device: i32) -> Self {
        TensorLayout {
            ptr,
            shape: shape.to_vec(),
            strides: contiguous_strides(shape),
            dtype,
            device,
        }
    }

    pub fn ndim(&self) -> usize {
        self.shape.len()
    }

    /// The element count; None past i128.
    pub fn numel(&self) -> Option<i128> {
        self.shape
            .iter()
            .try_fold(1i128, |count, &d| count.checked_mul(d as i128))
    }

    /// Half-open byte range [lo, hi) holding every element; (ptr, ptr) when empty; None when
    /// a bound is past i128 (then it is outside the address space too).
    pub fn byte_extent(&self) -> Option<(i128, i128)> {
        let ptr = self.ptr as i128;
        if self.shape.contains(&0) {
            return Some((ptr, ptr));
        }
        let (mut low, mut high) = (0i128, 0i128);
        for (&d, &s) in self.shape.iter().zip(&self.strides) {
            let reach = axis_reach(d, s);
            if s < 0 {
                low = low.checked_add(reach)?;
            } else {
                high = high.checked_add(reach)?;
            }
        }
        let size = self.dtype.itemsize() as i128;
        let lo = ptr.checked_add(low.checked_mul(size)?)?;
        let hi = ptr.checked_add(high.checked_add(1)?.checked_mul(size)?)?;
        Some((lo, hi))
    }

    /// The byte extent when it lies inside the 64-bit address space [0, 2^64), where a
    /// device's memory is; None otherwise.
    pub fn address_range(&self) -> Option<(i128, i128)> {
        self.byte_extent()
            .filter(|&(lo, hi)| 0 <= lo && hi <= 1 << 64)
    }

    /// One more than the largest element offset (axes of extent 0 left out); None past i128
    /// (never for a view inside the address space).
    fn element_span(&self) -> Option<i128> {
        self.shape
            .iter()
            .zip(&self.strides)
            .filter(|(&d, _)| d != 0)
            .try_fold(1i128, |span, (&d, &s)| span.checked_add(axis_reach(d, s)))
    }
}

/// The offset of an axis's last element, (extent - 1) * stride: exact in i128 for any i64s.
fn axis_reach(extent: i64, stride: i64) -> i128 {
    (extent as i128 - 1) * stride as i128
}

/// Row-major strides (in elements) of `shape`.
pub fn contiguous_strides(shape: &[i64]) -> Vec<i64> {
    let mut strides = vec![0i64; shape.len()];
    let mut step = 1i64;
    for (axis, &d) in shape.iter().enumerate().rev() {
        strides[axis] = step;
        step = step.saturating_mul(d.max(1));
    }
    strides
}

/// One launch argument as the planner sees it.
#[derive(Clone, Copy, Debug)]
pub enum PlanArg<'a> {
    /// A device tensor (an input, or a raw pointer's pointee).
    Tensor(&'a TensorLayout),
    /// A tensor moved into a partition of `tile` tiles (a `&mut Tensor` output).
    Partition {
        layout: &'a TensorLayout,
        tile: &'a [i64],
    },
    /// A partition mapped for a persistent kernel's `MappedPartitionMut` output.
    Mapped {
        layout: &'a TensorLayout,
        tile: &'a [i64],
        map: &'a [i64],
        num_tile_blocks: i64,
    },
    /// A scalar value (or, for a raw-pointer param, a device address as an int).
    Scalar(Scalar),
    /// A handle that was moved away (in Rust the type system rules this out; the Python
    /// host checks it at launch, and the shared vectors carry such cases).
    Moved(Handle),
    /// Something that is no launch argument at all (its type name).
    Other(&'a str),
}

/// Which kind of handle a moved argument was.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Handle {
    Tensor,
    Partition,
    Mapped,
}

/// Everything `cuLaunchKernel` needs, computed and checked on the host.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LaunchPlan {
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub shared_mem_bytes: u32,
    pub param_buffer: Vec<u8>,
    /// The tensors' device; None when no tensor is passed.
    pub device: Option<i32>,
}

struct Bound<'a> {
    param: &'a ParamSpec,
    layout: Option<&'a TensorLayout>,
    tile: &'a [i64],
    /// Outputs: the tiles along each axis.
    grid: Vec<i64>,
    value: Option<Scalar>,
    num_tile_blocks: i64,
    /// Tensors: the byte extent, inside the address space.
    extent: Option<(i128, i128)>,
}

type Checked<T> = Result<T, LaunchError>;

/// Check `args` against `spec` and compute the grid and the packed parameter buffer. `grid`
/// is given exactly when no output defines it (a raw-pointer kernel).
pub fn plan_launch(
    spec: &ContractSpec,
    args: &[PlanArg<'_>],
    grid: Option<&[i64]>,
) -> Checked<LaunchPlan> {
    let kernel = spec.name();
    if args.len() != spec.params.len() {
        let names: Vec<&str> = spec.params.iter().map(|p| p.name.as_str()).collect();
        return Err(LaunchError::new(
            K::Arity,
            kernel,
            None,
            format!("{} arguments ({})", spec.params.len(), names.join(", ")),
            args.len().to_string(),
        ));
    }
    let bound = spec
        .params
        .iter()
        .zip(args)
        .map(|(p, a)| bind(kernel, p, *a))
        .collect::<Checked<Vec<_>>>()?;
    let device = common_device(kernel, &bound)?;
    for a in &spec.assumptions {
        check_assumption(kernel, a, &bound[a.param])?;
    }
    check_exclusive_outputs(kernel, &bound)?;
    let grid_params: Vec<&Bound<'_>> = spec.grid_outputs.iter().map(|&i| &bound[i]).collect();
    let launch_grid = if spec.host_grid() {
        host_grid(kernel, grid)?
    } else if let Some(given) = grid {
        return Err(LaunchError::new(
            K::LaunchGrid,
            kernel,
            None,
            "no grid argument",
            py_tuple(given),
        )
        .detail("its outputs define the grid"));
    } else if spec.persistent() {
        persistent_grid(kernel, &grid_params)?
    } else {
        output_grid(kernel, &grid_params)?
    };
    let clustered = spec.host_grid() || spec.persistent();
    if clustered && launch_grid[0] % spec.cluster_blocks != 0 {
        return Err(LaunchError::new(
            K::GridLimit,
            kernel,
            grid_params.first().map(|b| b.param.name.as_str()),
            format!(
                "grid axis 0 a multiple of the cubin's cluster of {} tile blocks",
                spec.cluster_blocks
            ),
            launch_grid[0].to_string(),
        ));
    }
    check_launch(kernel, spec, &bound, launch_grid)?;
    let launch_grid = if clustered {
        launch_grid
    } else {
        cluster_grid(
            kernel,
            launch_grid,
            spec.cluster_blocks,
            &grid_params[0].param.name,
        )?
    };
    Ok(LaunchPlan {
        grid: launch_grid,
        block: spec.block,
        shared_mem_bytes: spec.shared_mem_bytes,
        param_buffer: pack(kernel, spec, &bound)?,
        device,
    })
}

// ---- binding ------------------------------------------------------------------------------

fn arg_name(arg: &PlanArg<'_>) -> String {
    match arg {
        PlanArg::Tensor(_) => "DeviceTensor".into(),
        PlanArg::Partition { .. } => "Partition".into(),
        PlanArg::Mapped { .. } => "MappedPartition".into(),
        PlanArg::Scalar(Scalar::Bool(_)) => "bool".into(),
        PlanArg::Scalar(Scalar::Int(_)) => "int".into(),
        PlanArg::Scalar(Scalar::Float(_)) => "float".into(),
        PlanArg::Moved(Handle::Tensor) => "DeviceTensor".into(),
        PlanArg::Moved(Handle::Partition) => "Partition".into(),
        PlanArg::Moved(Handle::Mapped) => "MappedPartition".into(),
        PlanArg::Other(name) => (*name).into(),
    }
}

fn bind<'a>(kernel: &str, param: &'a ParamSpec, arg: PlanArg<'a>) -> Checked<Bound<'a>> {
    let mut b = Bound {
        param,
        layout: None,
        tile: &[],
        grid: Vec::new(),
        value: None,
        num_tile_blocks: 0,
        extent: None,
    };
    match param.kind {
        ParamKind::Scalar => b.value = Some(scalar(kernel, param, arg)?),
        ParamKind::Pointer => pointer(kernel, param, arg, &mut b)?,
        ParamKind::TensorOut => {
            let (layout, tile) = output_layout(kernel, param, arg)?;
            b.extent = Some(check_tensor(kernel, param, layout)?);
            b.grid = check_output(kernel, param, layout, tile)?;
            (b.layout, b.tile) = (Some(layout), tile);
        }
        ParamKind::TensorOutMapped => {
            let (layout, tile, map, blocks) = mapped_output(kernel, param, arg)?;
            b.extent = Some(check_tensor(kernel, param, layout)?);
            b.grid = check_output(kernel, param, layout, tile)?;
            check_mapped(kernel, param, &b.grid, map, blocks)?;
            (b.layout, b.tile, b.num_tile_blocks) = (Some(layout), tile, blocks);
        }
        ParamKind::TensorIn => {
            let layout = input_layout(kernel, param, arg)?;
            b.extent = Some(check_tensor(kernel, param, layout)?);
            check_input_shape(kernel, param, layout)?;
            b.layout = Some(layout);
        }
    }
    Ok(b)
}

fn kind_error(kernel: &str, param: &ParamSpec, expected: &str, arg: &PlanArg<'_>) -> LaunchError {
    LaunchError::new(
        K::ArgumentKind,
        kernel,
        Some(&param.name),
        expected,
        arg_name(arg),
    )
}

fn pointer<'a>(
    kernel: &str,
    param: &'a ParamSpec,
    arg: PlanArg<'a>,
    b: &mut Bound<'a>,
) -> Checked<()> {
    let expected = format!("a {} DeviceTensor or a device address (int)", param.dtype);
    match arg {
        PlanArg::Tensor(layout) => {
            if layout.dtype != param.dtype {
                return Err(LaunchError::new(
                    K::DTypeMismatch,
                    kernel,
                    Some(&param.name),
                    param.dtype.name(),
                    layout.dtype.name(),
                ));
            }
            b.extent = Some(check_address_space(kernel, param, layout)?);
            b.layout = Some(layout);
            b.value = Some(Scalar::Int(layout.ptr as i128));
            Ok(())
        }
        PlanArg::Scalar(Scalar::Int(address)) => {
            if !(0 < address && address < 1 << 64) {
                return Err(LaunchError::new(
                    K::ScalarValue,
                    kernel,
                    Some(&param.name),
                    "a device address in [1, 2^64)",
                    address.to_string(),
                ));
            }
            b.value = Some(Scalar::Int(address));
            Ok(())
        }
        PlanArg::Moved(Handle::Tensor) => Err(LaunchError::new(
            K::MovedArgument,
            kernel,
            Some(&param.name),
            expected,
            "a tensor moved into a Partition",
        )),
        other => Err(kind_error(kernel, param, &expected, &other)),
    }
}

fn output_layout<'a>(
    kernel: &str,
    param: &ParamSpec,
    arg: PlanArg<'a>,
) -> Checked<(&'a TensorLayout, &'a [i64])> {
    let tiles = py_list(&param.tile_shape);
    let expected = format!("a Partition of a {} tensor with tiles {tiles}", param.dtype);
    match arg {
        PlanArg::Partition { layout, tile } => Ok((layout, tile)),
        PlanArg::Mapped { .. } | PlanArg::Moved(Handle::Mapped) => Err(kind_error(
            kernel, param, &expected, &arg,
        )
        .detail("this output is not a MappedPartitionMut; pass the Partition (mapped.unmap())")),
        PlanArg::Tensor(_) => Err(kind_error(kernel, param, &expected, &arg)
            .detail(format!("pass tensor.partition({tiles})"))),
        PlanArg::Moved(handle) => Err(LaunchError::new(
            K::MovedArgument,
            kernel,
            Some(&param.name),
            expected,
            moved_text(handle),
        )),
        _ => Err(kind_error(kernel, param, &expected, &arg)
            .detail("wrap it with DeviceTensor.wrap(obj).partition(tile_shape)")),
    }
}

type MappedParts<'a> = (&'a TensorLayout, &'a [i64], &'a [i64], i64);

fn mapped_output<'a>(
    kernel: &str,
    param: &ParamSpec,
    arg: PlanArg<'a>,
) -> Checked<MappedParts<'a>> {
    let (tiles, groups) = (py_list(&param.tile_shape), py_list(&param.map_shape));
    let expected = format!(
        "a MappedPartition of a {} tensor with tiles {tiles}, map {groups}",
        param.dtype
    );
    let how = format!("pass tensor.partition({tiles}).map({groups}, num_tile_blocks)");
    match arg {
        PlanArg::Mapped {
            layout,
            tile,
            map,
            num_tile_blocks,
        } => Ok((layout, tile, map, num_tile_blocks)),
        PlanArg::Partition { .. } => {
            Err(kind_error(kernel, param, &expected, &arg).detail(format!(
            "this output is a MappedPartitionMut; pass partition.map({groups}, num_tile_blocks)"
        )))
        }
        PlanArg::Moved(handle) => Err(LaunchError::new(
            K::MovedArgument,
            kernel,
            Some(&param.name),
            expected,
            moved_text(handle),
        )),
        _ => Err(kind_error(kernel, param, &expected, &arg).detail(how)),
    }
}

fn input_layout<'a>(
    kernel: &str,
    param: &ParamSpec,
    arg: PlanArg<'a>,
) -> Checked<&'a TensorLayout> {
    let expected = format!("a {} device tensor", param.dtype);
    match arg {
        PlanArg::Tensor(layout) => Ok(layout),
        PlanArg::Partition { .. }
        | PlanArg::Mapped { .. }
        | PlanArg::Moved(Handle::Partition | Handle::Mapped) => {
            Err(kind_error(kernel, param, &expected, &arg)
                .detail("only outputs (&mut) take partitions"))
        }
        PlanArg::Moved(Handle::Tensor) => Err(LaunchError::new(
            K::MovedArgument,
            kernel,
            Some(&param.name),
            expected,
            "a tensor moved into a Partition",
        )
        .detail("call partition.unpartition() first")),
        _ => Err(kind_error(kernel, param, &expected, &arg)),
    }
}

fn moved_text(handle: Handle) -> &'static str {
    match handle {
        Handle::Tensor => "a tensor already moved into a Partition",
        Handle::Partition => "a consumed Partition",
        Handle::Mapped => "a consumed MappedPartition",
    }
}

// ---- per-argument checks ------------------------------------------------------------------

/// The tensor's byte extent, once its dtype, rank, strides and extent are checked.
fn check_tensor(kernel: &str, param: &ParamSpec, layout: &TensorLayout) -> Checked<(i128, i128)> {
    let name = Some(param.name.as_str());
    if layout.dtype != param.dtype {
        return Err(LaunchError::new(
            K::DTypeMismatch,
            kernel,
            name,
            param.dtype.name(),
            layout.dtype.name(),
        ));
    }
    if layout.ndim() != param.rank {
        return Err(LaunchError::new(
            K::RankMismatch,
            kernel,
            name,
            param.rank.to_string(),
            layout.ndim().to_string(),
        ));
    }
    if layout.strides.iter().any(|&s| s < 0) {
        return Err(LaunchError::new(
            K::NegativeStride,
            kernel,
            name,
            "strides >= 0",
            py_list(&layout.strides),
        ));
    }
    check_address_space(kernel, param, layout)
}

/// The view's byte extent, when every byte is in [0, 2^64): no device address space holds
/// any other (a pointer near 2^64 with a large extent, a negative stride reaching below 0).
fn check_address_space(
    kernel: &str,
    param: &ParamSpec,
    layout: &TensorLayout,
) -> Checked<(i128, i128)> {
    layout.address_range().ok_or_else(|| {
        LaunchError::new(
            K::ArgumentKind,
            kernel,
            Some(&param.name),
            "a view of device memory inside the 64-bit address space [0, 2^64)",
            "a view with bytes outside the 64-bit address space",
        )
        .detail(format!(
            "address {:#x}, shape {}, strides {}",
            layout.ptr,
            py_list(&layout.shape),
            py_list(&layout.strides)
        ))
    })
}

/// The output's tiles along each axis, once its rank, partition tile and extents are checked.
fn check_output(
    kernel: &str,
    param: &ParamSpec,
    layout: &TensorLayout,
    tile: &[i64],
) -> Checked<Vec<i64>> {
    let name = Some(param.name.as_str());
    if !(1..=3).contains(&layout.ndim()) {
        return Err(LaunchError::new(
            K::OutputRank,
            kernel,
            name,
            "rank 1..3",
            layout.ndim().to_string(),
        ));
    }
    let wanted = &param.tile_shape;
    let fits =
        tile.len() == wanted.len() && wanted.iter().zip(tile).all(|(&w, &t)| w == -1 || w == t);
    // a wildcard (-1) takes a positive tile only (Python's partition() refuses the others)
    let Some(grid) = tile_grid(&layout.shape, tile).filter(|_| fits) else {
        // Python's repr of the expected list: `'*'` where any extent fits (a -1)
        let expected: Vec<String> = wanted
            .iter()
            .map(|&w| if w == -1 { "'*'".into() } else { w.to_string() })
            .collect();
        return Err(LaunchError::new(
            K::TileShapeMismatch,
            kernel,
            name,
            format!("[{}]", expected.join(", ")),
            py_list(tile),
        ));
    };
    if layout.shape.contains(&0) {
        return Err(LaunchError::new(
            K::EmptyOutput,
            kernel,
            name,
            "every extent > 0",
            py_list(&layout.shape),
        ));
    }
    Ok(grid)
}

/// Tiles per axis: ceil(extent / tile); None when a tile is not positive.
pub fn tile_grid(shape: &[i64], tile: &[i64]) -> Option<Vec<i64>> {
    shape
        .iter()
        .zip(tile)
        .map(|(&d, &t)| (t > 0).then(|| d.div_euclid(t) + i64::from(d.rem_euclid(t) != 0)))
        .collect()
}

fn check_mapped(
    kernel: &str,
    param: &ParamSpec,
    grid: &[i64],
    map: &[i64],
    blocks: i64,
) -> Checked<()> {
    let name = Some(param.name.as_str());
    if map != param.map_shape.as_slice() {
        return Err(LaunchError::new(
            K::MapShapeMismatch,
            kernel,
            name,
            py_list(&param.map_shape),
            py_list(map),
        )
        .detail("the kernel was compiled for this MAP; map the partition with it"));
    }
    // what the persistent loop hands out: one item per tile of the streamed axes (an OWNED
    // axis, map entry 0, is all of one item); past i128, more than any num_tile_blocks
    let items = grid
        .iter()
        .zip(map)
        .filter(|(_, &m)| m != 0)
        .try_fold(1i128, |count, (&g, _)| count.checked_mul(g as i128));
    if !(1 <= blocks && items.is_none_or(|items| blocks as i128 <= items)) {
        let items = items.map_or_else(|| "2^127 or more".into(), |n| n.to_string());
        return Err(LaunchError::new(
            K::NumTileBlocks,
            kernel,
            name,
            format!("1 <= num_tile_blocks <= {items} (the output's work items)"),
            blocks.to_string(),
        ));
    }
    Ok(())
}

fn check_input_shape(kernel: &str, param: &ParamSpec, layout: &TensorLayout) -> Checked<()> {
    for (&want, &got) in param.declared_shape.iter().zip(&layout.shape) {
        if want != -1 && want != got {
            let expected: Vec<String> = param
                .declared_shape
                .iter()
                .map(|&d| {
                    if d == -1 {
                        "'*'".to_string()
                    } else {
                        d.to_string()
                    }
                })
                .collect();
            return Err(LaunchError::new(
                K::ShapeMismatch,
                kernel,
                Some(&param.name),
                py_list(&expected),
                py_list(&layout.shape),
            ));
        }
    }
    Ok(())
}

fn scalar(kernel: &str, param: &ParamSpec, arg: PlanArg<'_>) -> Checked<Scalar> {
    let expected = format!("a {} scalar", param.dtype);
    let PlanArg::Scalar(value) = arg else {
        return Err(kind_error(kernel, param, &expected, &arg));
    };
    let bad = || {
        LaunchError::new(
            K::ScalarValue,
            kernel,
            Some(&param.name),
            expected.clone(),
            value.repr(),
        )
    };
    match param.dtype.class() {
        Class::Bool => match value {
            Scalar::Bool(b) => Ok(Scalar::Bool(b)),
            Scalar::Int(v @ (0 | 1)) => Ok(Scalar::Bool(v == 1)),
            _ => Err(bad()),
        },
        Class::Signed | Class::Unsigned => match value {
            Scalar::Int(v) => {
                let (low, high) = param.dtype.int_range().expect("an integer dtype");
                if v < low || v > high {
                    return Err(LaunchError::new(
                        K::ScalarValue,
                        kernel,
                        Some(&param.name),
                        format!("{} in [{low}, {high}]", param.dtype),
                        v.to_string(),
                    ));
                }
                Ok(Scalar::Int(v))
            }
            _ => Err(bad()),
        },
        Class::Float => match value {
            Scalar::Int(v) => Ok(Scalar::Float(v as f64)),
            Scalar::Float(v) => Ok(Scalar::Float(v)),
            Scalar::Bool(_) => Err(bad()),
        },
    }
}

fn common_device(kernel: &str, bound: &[Bound<'_>]) -> Checked<Option<i32>> {
    let mut device: Option<(i32, &str)> = None;
    for b in bound {
        let Some(layout) = b.layout else { continue };
        match device {
            None => device = Some((layout.device, &b.param.name)),
            Some((d, first)) if d != layout.device => {
                return Err(LaunchError::new(
                    K::DeviceMismatch,
                    kernel,
                    Some(&b.param.name),
                    format!("device {d} (as `{first}`)"),
                    format!("device {}", layout.device),
                ))
            }
            _ => {}
        }
    }
    Ok(device.map(|(d, _)| d))
}

// ---- assumptions --------------------------------------------------------------------------

fn check_assumption(kernel: &str, a: &AssumptionSpec, b: &Bound<'_>) -> Checked<()> {
    let holds = match b.layout {
        _ if a.kind == AssumptionKind::SlabDiv => {
            (b.tile[a.axis] as i128).rem_euclid(a.value as i128) == 0
        }
        None => scalar_assumption_holds(a, b.value),
        Some(layout) => tensor_assumption_holds(a, layout),
    };
    if holds {
        return Ok(());
    }
    Err(LaunchError::new(
        K::Assumption,
        kernel,
        Some(&b.param.name),
        a.describe(&b.param.name),
        assumption_actual(a, b),
    )
    .detail(
        "the kernel assumes it (a declared precondition or request facts); pass arguments \
         that meet it, or use a variant compiled without it",
    ))
}

fn scalar_assumption_holds(a: &AssumptionSpec, value: Option<Scalar>) -> bool {
    let number = match value {
        Some(Scalar::Bool(v)) => v as i128,
        Some(Scalar::Int(v)) => v,
        Some(Scalar::Float(v)) => {
            return a.kind != AssumptionKind::NonNeg || v >= 0.0;
        }
        None => 0,
    };
    if a.kind == AssumptionKind::NonNeg {
        return number >= 0;
    }
    (-(1i128 << 31)..=I32_MAX).contains(&number)
}

fn tensor_assumption_holds(a: &AssumptionSpec, layout: &TensorLayout) -> bool {
    let value = a.value as i128;
    match a.kind {
        AssumptionKind::BaseAlign => (layout.ptr as i128).rem_euclid(value) == 0,
        AssumptionKind::DimDiv => (layout.shape[a.axis] as i128).rem_euclid(value) == 0,
        AssumptionKind::StrideDiv => (layout.strides[a.axis] as i128).rem_euclid(value) == 0,
        AssumptionKind::StrideOne => layout.strides[a.axis] == 1,
        AssumptionKind::StaticDim => layout.shape[a.axis] as i128 == value,
        AssumptionKind::NonNeg => layout.shape.iter().chain(&layout.strides).all(|&v| v >= 0),
        AssumptionKind::SlabDiv => unreachable!("checked on the partition tile"),
        AssumptionKind::FitsI32 => {
            let largest = layout.shape.iter().chain(&layout.strides).max();
            let span = layout.element_span();
            span.is_some_and(|span| span.max(largest.map_or(0, |&v| v as i128)) <= I32_MAX)
        }
    }
}

fn assumption_actual(a: &AssumptionSpec, b: &Bound<'_>) -> String {
    if a.kind == AssumptionKind::SlabDiv {
        return format!("partition tile {}", py_list(b.tile));
    }
    let Some(layout) = b.layout else {
        return b
            .value
            .map(|v| python_str(&v))
            .unwrap_or_else(|| "None".into());
    };
    match a.kind {
        AssumptionKind::BaseAlign => format!("address {:#x}", layout.ptr),
        AssumptionKind::DimDiv | AssumptionKind::StaticDim => {
            format!("dim {}", layout.shape[a.axis])
        }
        AssumptionKind::StrideDiv | AssumptionKind::StrideOne => {
            format!("stride {}", layout.strides[a.axis])
        }
        AssumptionKind::NonNeg => format!(
            "shape {}, strides {}",
            py_tuple(&layout.shape),
            py_tuple(&layout.strides)
        ),
        AssumptionKind::SlabDiv => unreachable!("described above"),
        AssumptionKind::FitsI32 => format!(
            "shape {}, strides {}, element span {}",
            py_tuple(&layout.shape),
            py_tuple(&layout.strides),
            layout
                .element_span()
                .map_or_else(|| "past i128".into(), |span| span.to_string())
        ),
    }
}

fn python_str(value: &Scalar) -> String {
    value.repr()
}

// ---- aliasing -----------------------------------------------------------------------------

/// True when distinct indices address distinct elements (conservative: may reject some
/// exotic interleaved layouts that are in fact disjoint, never accepts a colliding one).
pub fn elements_disjoint(shape: &[i64], strides: &[i64]) -> bool {
    let mut axes: Vec<(i128, i128)> = shape
        .iter()
        .zip(strides)
        .filter(|(&d, _)| d > 1)
        .map(|(&d, &s)| ((s as i128).abs(), d as i128))
        .collect();
    axes.sort_unstable();
    let mut reach = 0i128;
    for (stride, extent) in axes {
        if stride <= reach {
            return false;
        }
        reach += (extent - 1) * stride;
    }
    true
}

fn check_exclusive_outputs(kernel: &str, bound: &[Bound<'_>]) -> Checked<()> {
    for (i, out) in bound.iter().enumerate() {
        let Some(layout) = out.layout.filter(|_| out.param.kind.is_output()) else {
            continue;
        };
        if !elements_disjoint(&layout.shape, &layout.strides) {
            return Err(LaunchError::new(
                K::SelfOverlap,
                kernel,
                Some(&out.param.name),
                "strides that give every element its own address",
                format!(
                    "shape {} with strides {}",
                    py_list(&layout.shape),
                    py_list(&layout.strides)
                ),
            ));
        }
        let Some((lo, hi)) = out.extent.filter(|(lo, hi)| lo != hi) else {
            continue;
        };
        for (j, other) in bound.iter().enumerate() {
            let Some((other_lo, other_hi)) = other.extent.filter(|_| i != j) else {
                continue;
            };
            if other_lo < hi && lo < other_hi {
                return Err(LaunchError::new(
                    K::Overlap,
                    kernel,
                    Some(&out.param.name),
                    "memory not shared with any other argument",
                    format!(
                        "bytes [{lo:#x}, {hi:#x}) overlapping `{}` [{other_lo:#x}, {other_hi:#x})",
                        other.param.name,
                    ),
                ));
            }
        }
    }
    Ok(())
}

// ---- grid ---------------------------------------------------------------------------------

fn output_grid(kernel: &str, outputs: &[&Bound<'_>]) -> Checked<[u32; 3]> {
    let mut grid: Option<([i128; 3], &str)> = None;
    for out in outputs {
        let mut candidate = [1i128; 3];
        for (size, &tiles) in candidate.iter_mut().zip(&out.grid) {
            *size = tiles as i128;
        }
        match grid {
            None => {
                for (axis, (&size, &limit)) in candidate.iter().zip(&GRID_LIMITS).enumerate() {
                    if size > limit {
                        return Err(LaunchError::new(
                            K::GridLimit,
                            kernel,
                            Some(&out.param.name),
                            format!("grid axis {axis} <= {limit}"),
                            size.to_string(),
                        ));
                    }
                }
                grid = Some((candidate, &out.param.name));
            }
            Some((first_grid, first)) if first_grid != candidate => {
                return Err(LaunchError::new(
                    K::GridMismatch,
                    kernel,
                    Some(&out.param.name),
                    format!("grid {} (from `{first}`)", py_tuple(&first_grid)),
                    format!("grid {}", py_tuple(&candidate)),
                ))
            }
            _ => {}
        }
    }
    let (g, _) = grid.expect("a validated contract has a grid output");
    Ok([g[0] as u32, g[1] as u32, g[2] as u32])
}

fn host_grid(kernel: &str, grid: Option<&[i64]>) -> Checked<[u32; 3]> {
    let Some(axes) = grid else {
        return Err(
            LaunchError::new(K::LaunchGrid, kernel, None, "grid=(x, y, z)", "no grid")
                .detail("no output defines this kernel's grid; pass it to the launch"),
        );
    };
    if axes.len() != 3 {
        return Err(LaunchError::new(
            K::LaunchGrid,
            kernel,
            None,
            "three ints (x, y, z)",
            py_tuple(axes),
        ));
    }
    for (axis, (&size, &limit)) in axes.iter().zip(&GRID_LIMITS).enumerate() {
        if !(1 <= size as i128 && size as i128 <= limit) {
            return Err(LaunchError::new(
                K::LaunchGrid,
                kernel,
                None,
                format!("1 <= grid axis {axis} <= {limit}"),
                size.to_string(),
            ));
        }
    }
    Ok([axes[0] as u32, axes[1] as u32, axes[2] as u32])
}

fn persistent_grid(kernel: &str, mapped: &[&Bound<'_>]) -> Checked<[u32; 3]> {
    let (blocks, first) = (mapped[0].num_tile_blocks, &mapped[0].param.name);
    for out in &mapped[1..] {
        if out.num_tile_blocks != blocks {
            return Err(LaunchError::new(
                K::GridMismatch,
                kernel,
                Some(&out.param.name),
                format!("num_tile_blocks {blocks} (from `{first}`)"),
                format!("num_tile_blocks {}", out.num_tile_blocks),
            ));
        }
    }
    if blocks as i128 > GRID_LIMITS[0] {
        return Err(LaunchError::new(
            K::GridLimit,
            kernel,
            Some(first),
            format!("grid axis 0 <= {}", GRID_LIMITS[0]),
            blocks.to_string(),
        ));
    }
    Ok([blocks as u32, 1, 1])
}

/// The CUDA grid for one tile block per output tile: with a cluster of `cluster` CTAs per
/// tile block (the cubin's `num_cta_in_cga`) the grid counts CTAs, so axis 0 grows by that
/// factor and the block ids (cluster ids) still cover exactly the tiles.
fn cluster_grid(kernel: &str, tiles: [u32; 3], cluster: u32, first: &str) -> Checked<[u32; 3]> {
    if cluster == 1 {
        return Ok(tiles);
    }
    let ctas = tiles[0] as i128 * cluster as i128;
    if ctas > GRID_LIMITS[0] {
        return Err(LaunchError::new(
            K::GridLimit,
            kernel,
            Some(first),
            format!(
                "grid axis 0 <= {} CTAs ({cluster} per tile)",
                GRID_LIMITS[0]
            ),
            ctas.to_string(),
        ));
    }
    Ok([ctas as u32, tiles[1], tiles[2]])
}

// ---- launch checks ------------------------------------------------------------------------

fn check_launch(
    kernel: &str,
    spec: &ContractSpec,
    bound: &[Bound<'_>],
    grid: [u32; 3],
) -> Checked<()> {
    if spec.launch_checks.is_empty() {
        return Ok(());
    }
    let shapes: Vec<Option<&[i64]>> = bound
        .iter()
        .map(|b| b.layout.map(|l| l.shape.as_slice()))
        .collect();
    let tiles: Vec<&[i64]> = bound.iter().map(|b| b.tile).collect();
    for check in &spec.launch_checks {
        let lhs = check.lhs.evaluate(&shapes, grid, &tiles);
        let rhs = check.rhs.evaluate(&shapes, grid, &tiles);
        if lhs > rhs {
            return Err(launch_check_error(kernel, spec, check, lhs, rhs));
        }
    }
    Ok(())
}

fn launch_check_error(
    kernel: &str,
    spec: &ContractSpec,
    check: &LaunchCheckSpec,
    lhs: i128,
    rhs: i128,
) -> LaunchError {
    let side = |text: String, value: i128| {
        if text == value.to_string() {
            text
        } else {
            format!("{text} = {value}")
        }
    };
    LaunchError::new(
        K::LaunchCheck,
        kernel,
        None,
        side(check.lhs.describe(&spec.params), lhs),
        side(check.rhs.describe(&spec.params), rhs),
    )
    .detail(check.cause.clone())
}

// ---- packing ------------------------------------------------------------------------------

fn slot_value(role: Role, axis: usize, b: &Bound<'_>) -> Scalar {
    if role == Role::Value || b.param.kind == ParamKind::Pointer {
        return b.value.expect("a bound scalar or address");
    }
    let layout = b.layout.expect("a bound tensor");
    let v = match role {
        Role::Ptr => layout.ptr as i128,
        Role::Dim => layout.shape[axis] as i128,
        Role::PartDim => b.tile[axis] as i128,
        _ => layout.strides[axis] as i128,
    };
    Scalar::Int(v)
}

fn pack(kernel: &str, spec: &ContractSpec, bound: &[Bound<'_>]) -> Checked<Vec<u8>> {
    let mut buffer = vec![0u8; spec.param_buffer_bytes];
    for slot in &spec.slots {
        let b = &bound[slot.param];
        let value = slot_value(slot.role, slot.axis, b);
        let out = &mut buffer[slot.offset..slot.offset + slot.size];
        if let Err(why) = pack_ctype(slot.ctype, value, out) {
            return Err(LaunchError::new(
                K::SlotValue,
                kernel,
                Some(&b.param.name),
                format!(
                    "{} axis {} representable as {}",
                    slot.role.name(),
                    slot.axis,
                    slot.ctype
                ),
                value.repr(),
            )
            .detail(why));
        }
    }
    Ok(buffer)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto;

    /// `z: &mut Tensor<f32, {[-1]}>`: a partition tile of any extent.
    fn wildcard_spec() -> ContractSpec {
        let slot = |role: proto::SlotRole, ctype: &str, offset: u32, size: u32| proto::AbiSlot {
            param: 0,
            role: role as i32,
            axis: 0,
            ctype: ctype.into(),
            offset,
            size,
        };
        let contract = proto::LaunchContract {
            schema_version: 1,
            kernel: Some(proto::KernelIdentity {
                function: "fill".into(),
                entry_symbol: "fill_entry".into(),
                ..Default::default()
            }),
            params: vec![proto::Param {
                name: "z".into(),
                kind: proto::ParamKind::TensorOut as i32,
                dtype: "f32".into(),
                rank: 1,
                tile_shape: vec![-1],
                ..Default::default()
            }],
            abi: vec![
                slot(proto::SlotRole::Ptr, "u64", 0, 8),
                slot(proto::SlotRole::Dim, "i32", 8, 4),
                slot(proto::SlotRole::Stride, "i32", 12, 4),
                slot(proto::SlotRole::PartDim, "i32", 16, 4),
                slot(proto::SlotRole::PartStride, "i32", 20, 4),
            ],
            grid: Some(proto::GridRule {
                mode: proto::grid_rule::Mode::FromOutputs as i32,
                output_params: vec![0],
            }),
            ..Default::default()
        };
        crate::contract::validate_contract(&contract).unwrap()
    }

    #[test]
    fn a_wildcard_tile_takes_positive_extents_only() {
        // Python's partition() refuses these; a PlanArg may carry them (a tile of 0 once
        // divided by zero when the grid was derived)
        let spec = wildcard_spec();
        let z = TensorLayout::contiguous(0x7F00_0000_0000, &[1024], DType::F32, 0);
        for tile in [[0], [-3]] {
            let args = [PlanArg::Partition {
                layout: &z,
                tile: &tile,
            }];
            let e = plan_launch(&spec, &args, None).unwrap_err();
            assert_eq!(e.kind, K::TileShapeMismatch, "{e}");
        }
        let args = [PlanArg::Partition {
            layout: &z,
            tile: &[100],
        }];
        assert_eq!(plan_launch(&spec, &args, None).unwrap().grid, [11, 1, 1]);
    }

    #[test]
    fn tile_grids_need_positive_tiles() {
        assert_eq!(tile_grid(&[1024, 7], &[100, 7]), Some(vec![11, 1]));
        assert_eq!(tile_grid(&[i64::MAX], &[1]), Some(vec![i64::MAX]));
        assert_eq!(tile_grid(&[1024], &[0]), None);
        assert_eq!(tile_grid(&[1024], &[-1]), None);
    }

    #[test]
    fn extents_outside_the_address_space_are_refused_not_wrapped() {
        // 2^128 elements: a wrapped product of 0 once called this tensor empty
        let mut x = TensorLayout::contiguous(0x1000, &[1 << 32; 4], DType::F32, 0);
        x.strides = vec![0; 4];
        assert_eq!(x.numel(), None);
        assert_eq!(x.byte_extent(), Some((0x1000, 0x1004)));
        assert_eq!(x.address_range(), Some((0x1000, 0x1004)));
        let big = i64::MAX;
        let far = TensorLayout {
            strides: vec![big],
            ..TensorLayout::contiguous(0x1000, &[big], DType::F32, 0)
        };
        assert_eq!(far.numel(), Some(big as i128));
        assert_eq!(far.address_range(), None);
        let cube = TensorLayout {
            strides: vec![big; 3],
            ..TensorLayout::contiguous(0x1000, &[big; 3], DType::F32, 0)
        };
        assert_eq!(cube.byte_extent(), None); // past i128: checked, not wrapped
        assert_eq!(cube.address_range(), None);
        let empty = TensorLayout::contiguous(0x1000, &[0, big, big], DType::F32, 0);
        assert_eq!(empty.address_range(), Some((0x1000, 0x1000)));
        let top = TensorLayout::contiguous(u64::MAX - 3, &[1], DType::F32, 0);
        assert_eq!(top.address_range(), Some((u64::MAX as i128 - 3, 1 << 64)));
        let past = TensorLayout::contiguous(u64::MAX - 3, &[2], DType::F32, 0);
        assert_eq!(past.address_range(), None);
        let below = TensorLayout {
            strides: vec![-1],
            ..TensorLayout::contiguous(0x100, &[1000], DType::F32, 0)
        };
        assert_eq!(below.byte_extent(), Some((0x100 - 999 * 4, 0x104)));
        assert_eq!(below.address_range(), None);
    }
}
