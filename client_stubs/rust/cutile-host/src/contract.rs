//! Validate a `LaunchContract` once and flatten it for the per-launch path, failing closed
//! exactly where `client_stubs.contract.validate_contract` does: an unknown schema version,
//! enum value, dtype or ctype, an inconsistent ABI, or a launch check that names a missing
//! param, axis or grid axis is a [`Error::Contract`].

use std::collections::HashMap;

use crate::dtype::DType;
use crate::errors::{Error, Result};
use crate::proto;
use crate::proto::grid_rule::Mode;
use crate::proto::quantity::Value as QuantityValue;

pub const SUPPORTED_SCHEMA_VERSIONS: [u32; 1] = [1];
/// The most bytes of kernel parameters the driver takes (CUDA 12.1+, Volta and newer): a
/// larger buffer is never launchable, and a hostile contract must not make the host allocate it.
pub const PARAM_BUFFER_LIMIT: usize = 32764;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ParamKind {
    TensorIn,
    TensorOut,
    TensorOutMapped,
    Scalar,
    Pointer,
}

impl ParamKind {
    pub fn name(self) -> &'static str {
        match self {
            ParamKind::TensorIn => "TENSOR_IN",
            ParamKind::TensorOut => "TENSOR_OUT",
            ParamKind::TensorOutMapped => "TENSOR_OUT_MAPPED",
            ParamKind::Scalar => "SCALAR",
            ParamKind::Pointer => "POINTER",
        }
    }

    pub fn is_output(self) -> bool {
        matches!(self, ParamKind::TensorOut | ParamKind::TensorOutMapped)
    }

    pub fn is_tensor(self) -> bool {
        matches!(
            self,
            ParamKind::TensorIn | ParamKind::TensorOut | ParamKind::TensorOutMapped
        )
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Role {
    Ptr,
    Dim,
    Stride,
    PartDim,
    PartStride,
    Value,
}

impl Role {
    pub fn name(self) -> &'static str {
        match self {
            Role::Ptr => "PTR",
            Role::Dim => "DIM",
            Role::Stride => "STRIDE",
            Role::PartDim => "PART_DIM",
            Role::PartStride => "PART_STRIDE",
            Role::Value => "VALUE",
        }
    }

    /// Every role, in ABI order.
    pub const ALL: [Role; 6] = [
        Role::Ptr,
        Role::Dim,
        Role::Stride,
        Role::PartDim,
        Role::PartStride,
        Role::Value,
    ];

    /// One slot per axis of the param (else one slot per param).
    pub fn per_axis(self) -> bool {
        matches!(
            self,
            Role::Dim | Role::Stride | Role::PartDim | Role::PartStride
        )
    }

    /// The slot types this role may have, as the compiler emits them (lowering/abi.py): a
    /// device address is u64, an extent or stride a signed index (i32, or i64 for dims past
    /// i32); a VALUE slot has its scalar's own dtype. Any other type has the kernel read
    /// another type's bits (a dim as a float's, an address as a double's).
    fn ctypes(self, param: &ParamSpec) -> Vec<DType> {
        match self {
            Role::Ptr => vec![DType::U64],
            Role::Value => vec![param.dtype],
            _ => vec![DType::I32, DType::I64],
        }
    }

    fn allows(self, kind: ParamKind) -> bool {
        use ParamKind::*;
        match self {
            Role::Ptr => kind != Scalar,
            Role::Dim | Role::Stride => kind.is_tensor(),
            Role::PartDim | Role::PartStride => kind.is_output(),
            Role::Value => kind == Scalar,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GridMode {
    FromOutputs,
    Persistent,
    Host,
}

impl GridMode {
    pub fn name(self) -> &'static str {
        match self {
            GridMode::FromOutputs => "FROM_OUTPUTS",
            GridMode::Persistent => "PERSISTENT",
            GridMode::Host => "HOST",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AssumptionKind {
    BaseAlign,
    DimDiv,
    StrideDiv,
    StrideOne,
    NonNeg,
    StaticDim,
    FitsI32,
    /// An output's partition tile extent along `axis` is a multiple of `value`.
    SlabDiv,
}

impl AssumptionKind {
    pub fn name(self) -> &'static str {
        match self {
            AssumptionKind::BaseAlign => "BASE_ALIGN",
            AssumptionKind::DimDiv => "DIM_DIV",
            AssumptionKind::StrideDiv => "STRIDE_DIV",
            AssumptionKind::StrideOne => "STRIDE_ONE",
            AssumptionKind::NonNeg => "NONNEG",
            AssumptionKind::StaticDim => "STATIC_DIM",
            AssumptionKind::FitsI32 => "FITS_I32",
            AssumptionKind::SlabDiv => "SLAB_DIV",
        }
    }

    fn per_axis(self) -> bool {
        matches!(
            self,
            AssumptionKind::DimDiv
                | AssumptionKind::StrideDiv
                | AssumptionKind::StrideOne
                | AssumptionKind::StaticDim
                | AssumptionKind::SlabDiv
        )
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParamSpec {
    pub index: usize,
    pub name: String,
    pub kind: ParamKind,
    pub dtype: DType,
    pub rank: usize,
    /// Inputs: the declared shape, -1 = any extent.
    pub declared_shape: Vec<i64>,
    /// Outputs (mapped ones too): the partition tile shape; -1: any partition tile extent.
    pub tile_shape: Vec<i64>,
    /// Mapped outputs: the schedule's swizzle groups.
    pub map_shape: Vec<i64>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SlotSpec {
    pub param: usize,
    pub role: Role,
    pub axis: usize,
    pub ctype: DType,
    pub offset: usize,
    pub size: usize,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AssumptionSpec {
    pub param: usize,
    pub kind: AssumptionKind,
    pub axis: usize,
    pub value: i64,
}

impl AssumptionSpec {
    /// The assumption as the error message states it.
    pub fn describe(&self, name: &str) -> String {
        let (axis, value) = (self.axis, self.value);
        match self.kind {
            AssumptionKind::BaseAlign => format!("address of `{name}` % {value} == 0"),
            AssumptionKind::DimDiv => format!("dim({name}, {axis}) % {value} == 0"),
            AssumptionKind::StrideDiv => format!("stride({name}, {axis}) % {value} == 0"),
            AssumptionKind::StrideOne => format!("stride({name}, {axis}) == 1"),
            AssumptionKind::NonNeg => format!("every dim and stride of `{name}` >= 0"),
            AssumptionKind::StaticDim => format!("dim({name}, {axis}) == {value}"),
            AssumptionKind::FitsI32 => {
                format!("dims, strides and element span of `{name}` fit in i32")
            }
            AssumptionKind::SlabDiv => format!("tile({name}, {axis}) % {value} == 0"),
        }
    }
}

/// A launch-known integer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Quantity {
    Constant(i64),
    /// Extent of a tensor param's axis.
    Dim {
        param: usize,
        axis: usize,
    },
    /// ceil(dim / tile).
    TileCount {
        param: usize,
        axis: usize,
        tile: i64,
    },
    /// The launch grid along axis 0, 1 or 2.
    GridAxis(usize),
    /// An output's partition tile extent along an axis divided by `tile`, rounded down:
    /// the sub-tiles of each block's slab.
    SlabTiles {
        param: usize,
        axis: usize,
        tile: i64,
    },
}

impl Quantity {
    /// The value given each param's shape (None for scalars and pointers), the grid and
    /// each param's partition tile (outputs; empty for the others).
    pub fn evaluate(&self, shapes: &[Option<&[i64]>], grid: [u32; 3], tiles: &[&[i64]]) -> i128 {
        match *self {
            Quantity::SlabTiles { param, axis, tile } => {
                (tiles[param][axis] as i128).div_euclid(tile as i128)
            }
            Quantity::Constant(v) => v as i128,
            Quantity::GridAxis(a) => grid[a] as i128,
            Quantity::Dim { param, axis } => shapes[param].expect("a tensor")[axis] as i128,
            Quantity::TileCount { param, axis, tile } => {
                let extent = shapes[param].expect("a tensor")[axis] as i128;
                ceil_div(extent, tile as i128)
            }
        }
    }

    pub fn describe(&self, params: &[ParamSpec]) -> String {
        match *self {
            Quantity::Constant(v) => v.to_string(),
            Quantity::GridAxis(a) => format!("grid axis {a}"),
            Quantity::Dim { param, axis } => format!("dim({}, {axis})", params[param].name),
            Quantity::TileCount { param, axis, tile } => {
                format!("ceil(dim({}, {axis}) / {tile})", params[param].name)
            }
            Quantity::SlabTiles { param, axis, tile } => {
                format!("tile({}, {axis}) / {tile}", params[param].name)
            }
        }
    }
}

pub(crate) fn ceil_div(a: i128, b: i128) -> i128 {
    -((-a).div_euclid(b))
}

/// A bounds obligation hoisted out of the kernel: holds when `lhs <= rhs`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LaunchCheckSpec {
    pub lhs: Quantity,
    pub rhs: Quantity,
    pub cause: String,
}

/// A validated launch contract, flattened for the launch path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ContractSpec {
    pub function: String,
    pub module: String,
    pub entry_symbol: String,
    pub sm: String,
    pub host_arch: String,
    pub params: Vec<ParamSpec>,
    pub slots: Vec<SlotSpec>,
    /// FROM_OUTPUTS: the outputs; PERSISTENT: the mapped outputs; HOST: none.
    pub grid_outputs: Vec<usize>,
    pub grid_mode: GridMode,
    pub block: [u32; 3],
    pub shared_mem_bytes: u32,
    pub param_buffer_bytes: usize,
    pub assumptions: Vec<AssumptionSpec>,
    pub unchecked_accesses: bool,
    pub generics: Vec<(String, String)>,
    pub launch_checks: Vec<LaunchCheckSpec>,
    /// CTAs per tile block: a host or persistent grid must be a multiple of it on axis 0;
    /// an output-derived grid (one tile block per tile) is scaled by it on axis 0.
    pub cluster_blocks: u32,
    /// The kernel waits for the grids before it before touching memory: it may be launched
    /// early (programmatic stream serialization).
    pub waits_for_prior_grids: bool,
    /// An occupancy variant: among a kernel's variants, taken only for launches of at least
    /// this many tile blocks; 0: any launch.
    pub min_tile_blocks: u32,
    /// The entry takes an occupancy variant's hint: a served kernel asks for one.
    pub takes_occupancy_variant: bool,
}

impl ContractSpec {
    /// The kernel's name in messages: the function, else the entry symbol.
    pub fn name(&self) -> &str {
        if self.function.is_empty() {
            &self.entry_symbol
        } else {
            &self.function
        }
    }

    pub fn persistent(&self) -> bool {
        self.grid_mode == GridMode::Persistent
    }

    /// The launch passes the grid (a kernel without a partitioned output).
    pub fn host_grid(&self) -> bool {
        self.grid_mode == GridMode::Host
    }

    /// The names of the raw-pointer params (their accesses are not bounds-checked).
    pub fn raw_pointers(&self) -> Vec<&str> {
        self.params
            .iter()
            .filter(|p| p.kind == ParamKind::Pointer)
            .map(|p| p.name.as_str())
            .collect()
    }
}

fn contract_error(message: String) -> Error {
    Error::Contract(message)
}

/// Check a contract's internal consistency and flatten it.
pub fn validate_contract(contract: &proto::LaunchContract) -> Result<ContractSpec> {
    if !SUPPORTED_SCHEMA_VERSIONS.contains(&contract.schema_version) {
        return Err(contract_error(format!(
            "launch contract schema_version {} is not supported (this client knows {:?})",
            contract.schema_version, SUPPORTED_SCHEMA_VERSIONS
        )));
    }
    let identity = contract.kernel.clone().unwrap_or_default();
    let name = if identity.function.is_empty() {
        identity.entry_symbol.clone()
    } else {
        identity.function.clone()
    };
    if identity.entry_symbol.is_empty() {
        return Err(contract_error(format!(
            "contract of `{name}` has no entry_symbol"
        )));
    }
    let params = contract
        .params
        .iter()
        .enumerate()
        .map(|(position, p)| param(&name, position, p))
        .collect::<Result<Vec<_>>>()?;
    let slots = contract
        .abi
        .iter()
        .map(|s| slot(&name, &params, s))
        .collect::<Result<Vec<_>>>()?;
    check_slot_coverage(&name, &params, &slots)?;
    let launch = contract.launch.clone().unwrap_or_default();
    let buffer_bytes = buffer_bytes(&name, launch.param_buffer_bytes as usize, &slots)?;
    let (grid_mode, grid_outputs) =
        grid(&name, &contract.grid.clone().unwrap_or_default(), &params)?;
    let block: Vec<u32> = if launch.block.is_empty() {
        vec![1, 1, 1]
    } else {
        launch.block.clone()
    };
    if block.len() != 3 || block.contains(&0) {
        return Err(contract_error(format!(
            "contract of `{name}`: block {} is not 3 positive dims",
            py_tuple(&block)
        )));
    }
    let target = contract.target.clone().unwrap_or_default();
    if launch.waits_for_prior_grids {
        check_prior_grid_wait(&name, &target)?;
    }
    let assumptions = contract
        .assumptions
        .iter()
        .map(|a| assumption(&name, &params, a))
        .collect::<Result<Vec<_>>>()?;
    let launch_checks = contract
        .launch_checks
        .iter()
        .enumerate()
        .map(|(position, c)| launch_check(&name, &params, position, c))
        .collect::<Result<Vec<_>>>()?;
    let safety = contract.safety.unwrap_or_default();
    let specialization = contract.specialization.clone().unwrap_or_default();
    Ok(ContractSpec {
        function: identity.function,
        module: identity.module,
        entry_symbol: identity.entry_symbol,
        sm: target.sm,
        host_arch: target.host_arch,
        params,
        slots,
        grid_outputs,
        grid_mode,
        block: [block[0], block[1], block[2]],
        shared_mem_bytes: launch.shared_mem_bytes,
        param_buffer_bytes: buffer_bytes,
        assumptions,
        unchecked_accesses: safety.unchecked_accesses,
        generics: specialization
            .generics
            .iter()
            .map(|g| (g.name.clone(), g.value.clone()))
            .collect(),
        launch_checks,
        cluster_blocks: launch.cluster_blocks.max(1),
        waits_for_prior_grids: launch.waits_for_prior_grids,
        min_tile_blocks: launch.min_tile_blocks,
        takes_occupancy_variant: launch.takes_occupancy_variant,
    })
}

/// A kernel said to wait for prior grids is launched early, so its cubin must have the wait:
/// bytecode 13.4 or later (the first with it) for sm_90 or later (the first with dependent
/// launches; tileiras drops the wait below).
fn check_prior_grid_wait(name: &str, target: &proto::Target) -> Result<()> {
    let version: Vec<u64> = target
        .bytecode_version
        .split('.')
        .filter_map(ascii_number)
        .collect();
    let digits = target
        .sm
        .strip_prefix("sm_")
        .unwrap_or(&target.sm)
        .trim_end_matches(['a', 'f']);
    let sm = ascii_number(digits).unwrap_or(0);
    if version.as_slice() < [13, 4].as_slice() || sm < 90 {
        let or_unknown = |s: &str| {
            if s.is_empty() {
                "?".to_string()
            } else {
                s.to_string()
            }
        };
        return Err(contract_error(format!(
            "contract of `{name}` says it waits for prior grids, but its cubin is bytecode {} \
             for {} (the wait needs bytecode 13.4 or later and sm_90 or later)",
            or_unknown(&target.bytecode_version),
            or_unknown(&target.sm)
        )));
    }
    Ok(())
}

/// `text` as a number when it is ASCII digits only, else None; past u64, u64's largest.
fn ascii_number(text: &str) -> Option<u64> {
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some(text.parse().unwrap_or(u64::MAX))
}

/// Python's `ascii()` of a string: quoted as `repr` quotes it (single quotes unless the text
/// holds a single quote and no double one), with backslashes, that quote, control characters
/// and everything past ASCII escaped, so a hostile name cannot put raw bytes in a message.
pub(crate) fn py_ascii(text: &str) -> String {
    let quote = if text.contains('\'') && !text.contains('"') {
        '"'
    } else {
        '\''
    };
    let mut out = String::with_capacity(text.len() + 2);
    out.push(quote);
    for c in text.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            ' '..='~' => out.push(c),
            c if (c as u32) < 0x100 => out.push_str(&format!("\\x{:02x}", c as u32)),
            c if (c as u32) < 0x10000 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push_str(&format!("\\U{:08x}", c as u32)),
        }
    }
    out.push(quote);
    out
}

/// Python's repr of a tuple of ints: `(1,)`, `(1, 2)`.
pub(crate) fn py_tuple<T: std::fmt::Display>(items: &[T]) -> String {
    let parts: Vec<String> = items.iter().map(|i| i.to_string()).collect();
    if parts.len() == 1 {
        format!("({},)", parts[0])
    } else {
        format!("({})", parts.join(", "))
    }
}

/// Python's repr of a list of ints: `[1, 2]`.
pub(crate) fn py_list<T: std::fmt::Display>(items: &[T]) -> String {
    let parts: Vec<String> = items.iter().map(|i| i.to_string()).collect();
    format!("[{}]", parts.join(", "))
}

fn param_kind(kind: i32) -> Option<ParamKind> {
    match proto::ParamKind::try_from(kind).ok()? {
        proto::ParamKind::TensorIn => Some(ParamKind::TensorIn),
        proto::ParamKind::TensorOut => Some(ParamKind::TensorOut),
        proto::ParamKind::Scalar => Some(ParamKind::Scalar),
        proto::ParamKind::TensorOutMapped => Some(ParamKind::TensorOutMapped),
        proto::ParamKind::Pointer => Some(ParamKind::Pointer),
        proto::ParamKind::Unspecified => None,
    }
}

fn param(kernel: &str, position: usize, p: &proto::Param) -> Result<ParamSpec> {
    let at = format!("contract of `{kernel}`: param {position} `{}`", p.name);
    if p.index as usize != position {
        return Err(contract_error(format!(
            "{at}: index {} differs from its position {position}",
            p.index
        )));
    }
    let kind = param_kind(p.kind)
        .ok_or_else(|| contract_error(format!("{at}: unknown kind {}", p.kind)))?;
    let dtype = DType::parse(&p.dtype)
        .ok_or_else(|| contract_error(format!("{at}: unknown dtype {}", py_ascii(&p.dtype))))?;
    let rank = p.rank as usize;
    check_shapes(
        &at,
        kind,
        rank,
        &p.declared_shape,
        &p.tile_shape,
        &p.map_shape,
    )?;
    Ok(ParamSpec {
        index: position,
        name: p.name.clone(),
        kind,
        dtype,
        rank,
        declared_shape: p.declared_shape.clone(),
        tile_shape: p.tile_shape.clone(),
        map_shape: p.map_shape.clone(),
    })
}

fn check_shapes(
    at: &str,
    kind: ParamKind,
    rank: usize,
    declared: &[i64],
    tiles: &[i64],
    groups: &[i64],
) -> Result<()> {
    if kind.is_output() {
        if !(1..=3).contains(&rank) {
            return Err(contract_error(format!(
                "{at}: output rank {rank} is not 1..3"
            )));
        }
        // a partitioned output's -1: any partition tile extent (given at launch)
        let any_extent = (kind == ParamKind::TensorOut).then_some(-1);
        if tiles.len() != rank || tiles.iter().any(|&t| t <= 0 && Some(t) != any_extent) {
            return Err(contract_error(format!(
                "{at}: tile shape {} does not fit rank {rank}",
                py_tuple(tiles)
            )));
        }
    } else if kind == ParamKind::TensorIn {
        if declared.len() != rank || declared.iter().any(|&d| d < -1) {
            return Err(contract_error(format!(
                "{at}: declared shape {} does not fit rank {rank}",
                py_tuple(declared)
            )));
        }
    } else if rank != 0 || !declared.is_empty() || !tiles.is_empty() {
        return Err(contract_error(format!(
            "{at}: a {} has no rank or shape",
            kind.name().to_lowercase()
        )));
    }
    if kind == ParamKind::TensorOutMapped {
        // a group size per axis, or 0 for an OWNED axis; at least one group
        if groups.len() != rank || groups.iter().any(|&g| g < 0) || !groups.iter().any(|&g| g != 0)
        {
            return Err(contract_error(format!(
                "{at}: map shape {} does not fit rank {rank}",
                py_tuple(groups)
            )));
        }
    } else if !groups.is_empty() {
        return Err(contract_error(format!(
            "{at}: only a mapped output has a map shape, got {}",
            py_tuple(groups)
        )));
    }
    Ok(())
}

fn role(role: i32) -> Option<Role> {
    match proto::SlotRole::try_from(role).ok()? {
        proto::SlotRole::Ptr => Some(Role::Ptr),
        proto::SlotRole::Dim => Some(Role::Dim),
        proto::SlotRole::Stride => Some(Role::Stride),
        proto::SlotRole::PartDim => Some(Role::PartDim),
        proto::SlotRole::PartStride => Some(Role::PartStride),
        proto::SlotRole::Value => Some(Role::Value),
        proto::SlotRole::Unspecified => None,
    }
}

fn slot(kernel: &str, params: &[ParamSpec], s: &proto::AbiSlot) -> Result<SlotSpec> {
    let at = format!("contract of `{kernel}`: ABI slot at offset {}", s.offset);
    let param = params
        .get(s.param as usize)
        .ok_or_else(|| contract_error(format!("{at}: param {} does not exist", s.param)))?;
    let r = role(s.role).ok_or_else(|| contract_error(format!("{at}: unknown role {}", s.role)))?;
    if !r.allows(param.kind) {
        return Err(contract_error(format!(
            "{at}: role {} is invalid for {} `{}`",
            r.name(),
            param.kind.name(),
            param.name
        )));
    }
    let axis = s.axis as usize;
    if r.per_axis() && axis >= param.rank {
        return Err(contract_error(format!(
            "{at}: axis {axis} out of range for rank {}",
            param.rank
        )));
    }
    let ctype = DType::parse(&s.ctype)
        .ok_or_else(|| contract_error(format!("{at}: unknown ctype {}", py_ascii(&s.ctype))))?;
    let size = s.size as usize;
    if size != ctype.itemsize() {
        return Err(contract_error(format!(
            "{at}: size {size} differs from {ctype}'s {}",
            ctype.itemsize()
        )));
    }
    if !(s.offset as usize).is_multiple_of(size) {
        return Err(contract_error(format!(
            "{at}: offset is not naturally aligned for {ctype}"
        )));
    }
    let allowed = r.ctypes(param);
    if !allowed.contains(&ctype) {
        let names: Vec<&str> = allowed.iter().map(|t| t.name()).collect();
        return Err(contract_error(format!(
            "{at}: a {} slot of {} `{}` must be {}, got {ctype}",
            r.name(),
            param.kind.name(),
            param.name,
            names.join(" or ")
        )));
    }
    Ok(SlotSpec {
        param: s.param as usize,
        role: r,
        axis,
        ctype,
        offset: s.offset as usize,
        size,
    })
}

/// Every param has each slot its kind needs, once (kernelParams must hold exactly the cubin's
/// parameters: a missing slot would have the driver read past them).
fn check_slot_coverage(kernel: &str, params: &[ParamSpec], slots: &[SlotSpec]) -> Result<()> {
    let mut counts: HashMap<(usize, Role, usize), usize> = HashMap::new();
    for s in slots {
        let axis = if s.role.per_axis() { s.axis } else { 0 };
        *counts.entry((s.param, s.role, axis)).or_default() += 1;
    }
    for param in params {
        for role in Role::ALL.into_iter().filter(|r| r.allows(param.kind)) {
            let axes = if role.per_axis() { param.rank } else { 1 };
            for axis in 0..axes {
                let count = counts.get(&(param.index, role, axis)).copied().unwrap_or(0);
                if count != 1 {
                    let place = if role.per_axis() {
                        format!(" for axis {axis}")
                    } else {
                        String::new()
                    };
                    let have = if count == 0 {
                        "no".to_string()
                    } else {
                        count.to_string()
                    };
                    let plural = if count > 1 { "s" } else { "" };
                    return Err(contract_error(format!(
                        "contract of `{kernel}`: param {} `{}` has {have} {} slot{plural}{place}, \
                         where it needs one",
                        param.index,
                        param.name,
                        role.name()
                    )));
                }
            }
        }
    }
    Ok(())
}

fn buffer_bytes(kernel: &str, declared: usize, slots: &[SlotSpec]) -> Result<usize> {
    for pair in slots.windows(2) {
        let (previous, slot) = (pair[0], pair[1]);
        if slot.offset < previous.offset + previous.size {
            return Err(contract_error(format!(
                "contract of `{kernel}`: ABI slots at offsets {} and {} overlap or are out of order",
                previous.offset, slot.offset
            )));
        }
    }
    let end = slots.last().map_or(0, |s| s.offset + s.size);
    if declared != 0 && declared < end {
        return Err(contract_error(format!(
            "contract of `{kernel}`: param_buffer_bytes {declared} < {end} needed by the ABI slots"
        )));
    }
    let size = if declared != 0 { declared } else { end };
    if size > PARAM_BUFFER_LIMIT {
        return Err(contract_error(format!(
            "contract of `{kernel}`: a parameter buffer of {size} bytes is past the driver's \
             limit of {PARAM_BUFFER_LIMIT} bytes of kernel parameters"
        )));
    }
    Ok(size)
}

/// The grid mode and the params that define the grid: every output of the mode's kind, each
/// once (an empty `output_params`: all of them), since the grid is checked against the listed
/// outputs only and the blocks write every output.
fn grid(
    kernel: &str,
    rule: &proto::GridRule,
    params: &[ParamSpec],
) -> Result<(GridMode, Vec<usize>)> {
    let mode = match Mode::try_from(rule.mode) {
        Ok(Mode::FromOutputs) => GridMode::FromOutputs,
        Ok(Mode::Persistent) => GridMode::Persistent,
        Ok(Mode::Host) => GridMode::Host,
        _ => {
            return Err(contract_error(format!(
                "contract of `{kernel}`: unsupported grid mode {}",
                rule.mode
            )))
        }
    };
    if mode == GridMode::Host {
        host_grid(kernel, rule, params)?;
        return Ok((mode, Vec::new()));
    }
    let (kind, other) = if mode == GridMode::Persistent {
        (ParamKind::TensorOutMapped, ParamKind::TensorOut)
    } else {
        (ParamKind::TensorOut, ParamKind::TensorOutMapped)
    };
    let stray: Vec<String> = params
        .iter()
        .filter(|p| p.kind == other)
        .map(|p| format!("`{}`", p.name))
        .collect();
    if !stray.is_empty() {
        return Err(contract_error(format!(
            "contract of `{kernel}`: grid mode {} cannot launch the {} param(s) {}",
            mode.name(),
            other.name(),
            stray.join(", ")
        )));
    }
    let every: Vec<usize> = params
        .iter()
        .filter(|p| p.kind == kind)
        .map(|p| p.index)
        .collect();
    let outputs: Vec<usize> = if rule.output_params.is_empty() {
        every.clone()
    } else {
        rule.output_params.iter().map(|&i| i as usize).collect()
    };
    if outputs.is_empty() {
        return Err(contract_error(format!(
            "contract of `{kernel}`: no output defines the launch grid"
        )));
    }
    for &index in &outputs {
        if params.get(index).map(|p| p.kind) != Some(kind) {
            return Err(contract_error(format!(
                "contract of `{kernel}`: grid param {index} is not an output ({} for grid mode {})",
                kind.name(),
                mode.name()
            )));
        }
    }
    let mut listed = outputs.clone();
    listed.sort_unstable();
    if listed != every {
        return Err(contract_error(format!(
            "contract of `{kernel}`: grid params {} are not each {} param once ({})",
            py_list(&outputs),
            kind.name(),
            py_list(&every)
        )));
    }
    Ok((mode, outputs))
}

fn host_grid(kernel: &str, rule: &proto::GridRule, params: &[ParamSpec]) -> Result<()> {
    let outputs: Vec<String> = params
        .iter()
        .filter(|p| p.kind.is_output())
        .map(|p| format!("`{}`", p.name))
        .collect();
    if !outputs.is_empty() || !rule.output_params.is_empty() {
        let named = if outputs.is_empty() {
            format!("params {}", py_list(&rule.output_params))
        } else {
            outputs.join(", ")
        };
        return Err(contract_error(format!(
            "contract of `{kernel}`: grid mode HOST cannot launch the output(s) {named}"
        )));
    }
    Ok(())
}

fn assumption_kind(kind: i32) -> Option<AssumptionKind> {
    use proto::AssumptionKind as A;
    match A::try_from(kind).ok()? {
        A::BaseAlign => Some(AssumptionKind::BaseAlign),
        A::DimDiv => Some(AssumptionKind::DimDiv),
        A::StrideDiv => Some(AssumptionKind::StrideDiv),
        A::StrideOne => Some(AssumptionKind::StrideOne),
        A::Nonneg => Some(AssumptionKind::NonNeg),
        A::StaticDim => Some(AssumptionKind::StaticDim),
        A::FitsI32 => Some(AssumptionKind::FitsI32),
        A::SlabDiv => Some(AssumptionKind::SlabDiv),
        A::Unspecified => None,
    }
}

fn assumption(kernel: &str, params: &[ParamSpec], a: &proto::Assumption) -> Result<AssumptionSpec> {
    let at = format!("contract of `{kernel}`: assumption on param {}", a.param);
    let param = params
        .get(a.param as usize)
        .ok_or_else(|| contract_error(format!("{at}: param does not exist")))?;
    let kind = assumption_kind(a.kind)
        .ok_or_else(|| contract_error(format!("{at}: unknown assumption kind {}", a.kind)))?;
    let name = kind.name();
    if param.kind == ParamKind::Pointer {
        return Err(contract_error(format!(
            "{at}: {name} does not apply to raw pointer `{}`",
            param.name
        )));
    }
    if param.kind == ParamKind::Scalar
        && !matches!(kind, AssumptionKind::NonNeg | AssumptionKind::FitsI32)
    {
        return Err(contract_error(format!(
            "{at}: {name} does not apply to scalar `{}`",
            param.name
        )));
    }
    if kind.per_axis() && a.axis as usize >= param.rank {
        return Err(contract_error(format!(
            "{at}: {name} axis {} out of range for rank {}",
            a.axis, param.rank
        )));
    }
    if matches!(
        kind,
        AssumptionKind::BaseAlign
            | AssumptionKind::DimDiv
            | AssumptionKind::StrideDiv
            | AssumptionKind::SlabDiv
    ) && a.value <= 0
    {
        return Err(contract_error(format!(
            "{at}: {name} needs a positive value, got {}",
            a.value
        )));
    }
    if kind == AssumptionKind::SlabDiv && param.kind != ParamKind::TensorOut {
        return Err(contract_error(format!(
            "{at}: {name} applies to an output, not `{}`",
            param.name
        )));
    }
    Ok(AssumptionSpec {
        param: a.param as usize,
        kind,
        axis: a.axis as usize,
        value: a.value,
    })
}

fn launch_check(
    kernel: &str,
    params: &[ParamSpec],
    position: usize,
    check: &proto::LaunchCheck,
) -> Result<LaunchCheckSpec> {
    let mut at = format!("contract of `{kernel}`: launch check {position}");
    if !check.cause.is_empty() {
        at += &format!(" ({})", check.cause);
    }
    let lhs = quantity(&format!("{at}: lhs"), params, check.lhs.as_ref())?;
    let rhs = quantity(&format!("{at}: rhs"), params, check.rhs.as_ref())?;
    Ok(LaunchCheckSpec {
        lhs,
        rhs,
        cause: check.cause.clone(),
    })
}

fn quantity(at: &str, params: &[ParamSpec], q: Option<&proto::Quantity>) -> Result<Quantity> {
    let value = q.and_then(|q| q.value.as_ref()).ok_or_else(|| {
        contract_error(format!(
            "{at}: no quantity (constant, dim, tile_count, ...) set"
        ))
    })?;
    let (kind, param, axis) = match value {
        QuantityValue::Constant(v) => return Ok(Quantity::Constant(*v)),
        QuantityValue::GridAxis(a) => {
            if *a >= 3 {
                return Err(contract_error(format!(
                    "{at}: grid axis {a} is not 0, 1 or 2"
                )));
            }
            return Ok(Quantity::GridAxis(*a as usize));
        }
        QuantityValue::Dim(d) => ("dim", d.param as usize, d.axis as usize),
        QuantityValue::TileCount(t) => ("tile_count", t.param as usize, t.axis as usize),
        QuantityValue::SlabTiles(t) => ("slab_tiles", t.param as usize, t.axis as usize),
    };
    let p = params
        .get(param)
        .ok_or_else(|| contract_error(format!("{at}: {kind} param {param} does not exist")))?;
    if p.kind == ParamKind::Scalar {
        return Err(contract_error(format!(
            "{at}: {kind} refers to scalar `{}`, not a tensor",
            p.name
        )));
    }
    if axis >= p.rank {
        return Err(contract_error(format!(
            "{at}: {kind} axis {axis} out of range for `{}` of rank {}",
            p.name, p.rank
        )));
    }
    let tile = match value {
        QuantityValue::TileCount(t) | QuantityValue::SlabTiles(t) => t.tile,
        _ => return Ok(Quantity::Dim { param, axis }),
    };
    if tile <= 0 {
        return Err(contract_error(format!(
            "{at}: {kind} of `{}` needs a positive tile, got {tile}",
            p.name
        )));
    }
    if let QuantityValue::SlabTiles(_) = value {
        if p.kind != ParamKind::TensorOut {
            return Err(contract_error(format!(
                "{at}: slab_tiles refers to `{}`, not an output",
                p.name
            )));
        }
        return Ok(Quantity::SlabTiles { param, axis, tile });
    }
    Ok(Quantity::TileCount { param, axis, tile })
}

#[cfg(test)]
mod tests {
    use super::py_ascii;

    #[test]
    fn strings_quote_as_pythons_ascii() {
        // each right-hand side is what Python's ascii() prints for the left-hand side
        let cases = [
            ("f32", "'f32'"),
            ("add\u{0}", "'add\\x00'"),
            ("e\u{e9}\u{301}", "'e\\xe9\\u0301'"),
            ("it's", "\"it's\""),
            ("a\"b'c\\", "'a\"b\\'c\\\\'"),
            ("\u{1b}[2J", "'\\x1b[2J'"),
            ("\u{1f600}\t", "'\\U0001f600\\t'"),
        ];
        for (text, quoted) in cases {
            assert_eq!(py_ascii(text), quoted, "{text:?}");
        }
    }
}
