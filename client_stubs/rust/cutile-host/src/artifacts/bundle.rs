//! Bundles written by `cutile-compile`: `manifest.json` beside the cubins and contracts, read
//! with the checks of `client_stubs/artifacts.py`.
//!
//! ```text
//! OUT/manifest.json   {"schema": 2, "kernels": [{"module", "function", "generics": {..},
//!                       "sm", "cubin", "contract", "contract_json", "cubin_sha256",
//!                       "contract_sha256", "facts": [..], "min_tile_blocks"}, ...]}
//! OUT/<file>.cubin, OUT/<file>.contract.pb
//! ```
//!
//! [`Bundle::load`] verifies the cubin's and the contract's sha256 (both required) and that
//! the contract agrees with its manifest entry. Variants of one kernel that differ only in
//! their tensor facts are told apart by the arguments ([`Bundle::find_for`]): the most
//! specialized variant whose assumptions they meet, ranking variants that relax the default
//! view assumptions below every one that keeps them.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use prost::Message;
use serde_json::Value;

use crate::artifacts::integrity::{contract_bytes, sha256_hex, MAX_CUBIN_BYTES};
use crate::artifacts::read_regular_file;
use crate::contract::{validate_contract, ContractSpec};
use crate::errors::{Error, Result};
use crate::plan::{plan_launch, LaunchPlan, PlanArg};
use crate::proto::LaunchContract;

pub const MANIFEST: &str = "manifest.json";
/// 2: schema 1 with occupancy variants (`min_tile_blocks`), which a host that reads only
/// schema 1 would take for duplicates.
pub const SUPPORTED_SCHEMAS: [i64; 2] = [1, 2];
/// No file of a bundle (manifest, cubin, contract) is larger than a host takes a cubin: the
/// Python host's `artifacts.MAX_FILE_BYTES` (= `integrity.MAX_CUBIN_BYTES`).
pub const MAX_FILE_BYTES: usize = MAX_CUBIN_BYTES;
/// What a kernel assumes of a base address without facts (bytes).
const DEFAULT_BASE_ALIGN: i64 = 16;

/// Generic values compare as text without spaces: 128 == "128", [64,32] == "[64, 32]".
pub fn normalize_generic(value: &str) -> String {
    value.replace(' ', "")
}

fn json_generic(value: &Value) -> String {
    match value {
        Value::String(s) => normalize_generic(s),
        Value::Array(items) => {
            let parts: Vec<String> = items.iter().map(json_generic).collect();
            format!("[{}]", parts.join(","))
        }
        other => normalize_generic(&other.to_string()),
    }
}

/// One compiled kernel of a bundle (paths resolved inside the bundle).
/// A variant's place among its kernel's variants, highest first ([`BundleEntry::rank`]):
/// minus its relaxation, whether it is an occupancy variant, its specificity.
pub type Rank = (i64, bool, u32);

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BundleEntry {
    pub module: String,
    pub function: String,
    pub generics: Vec<(String, String)>,
    pub sm: String,
    pub cubin: PathBuf,
    pub contract: Option<PathBuf>,
    pub cubin_sha256: String,
    pub contract_sha256: String,
    /// The sum of log2(divisor) over its tensor facts.
    pub specificity: u32,
    /// log2(16 / base_align) per tensor, plus one per tensor whose last stride may vary.
    pub relaxation: u32,
    /// An occupancy variant: taken only for launches of at least this many tile blocks
    /// (its contract's `min_tile_blocks`); 0: any launch.
    pub min_tile_blocks: u32,
}

impl BundleEntry {
    /// Whether this entry's generics include every one of `wanted`.
    pub fn matches(&self, wanted: &[(&str, &str)]) -> bool {
        wanted.iter().all(|(k, v)| {
            self.generics
                .iter()
                .any(|(mk, mv)| mk == k && *mv == normalize_generic(v))
        })
    }

    pub fn generic(&self, name: &str) -> Option<&str> {
        self.generics
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    pub fn label(&self) -> String {
        let generics: Vec<String> = self
            .generics
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        let mut text = format!(
            "{}::{}<{}> for {}",
            self.module,
            self.function,
            generics.join(", "),
            self.sm
        );
        if self.specificity > 0 {
            text += &format!(" specialized ({})", self.specificity);
        }
        if self.relaxation > 0 {
            text += &format!(" relaxed ({})", self.relaxation);
        }
        if self.min_tile_blocks > 0 {
            text += &format!(" for {}+ tile blocks", self.min_tile_blocks);
        }
        text
    }

    /// How variants of one kernel order: the least relaxed, then occupancy variants, then
    /// the most specialized first.
    pub fn rank(&self) -> Rank {
        (
            -(self.relaxation as i64),
            self.min_tile_blocks > 0,
            self.specificity,
        )
    }

    /// The general kernel: no facts, any launch.
    pub fn is_general(&self) -> bool {
        self.specificity == 0 && self.relaxation == 0 && self.min_tile_blocks == 0
    }
}

/// A verified kernel read from a bundle: the cubin and its launch contract.
#[derive(Clone, Debug)]
pub struct LoadedKernel {
    pub cubin: Vec<u8>,
    pub cubin_sha256: String,
    pub contract: LaunchContract,
}

/// A folder of compiled kernels described by `manifest.json`.
#[derive(Clone, Debug)]
pub struct Bundle {
    pub root: PathBuf,
    pub entries: Vec<BundleEntry>,
}

fn bundle_error(message: String) -> Error {
    Error::Bundle(message)
}

impl Bundle {
    pub fn open(path: impl AsRef<Path>) -> Result<Bundle> {
        let root = path.as_ref().to_path_buf();
        let manifest_path = root.join(MANIFEST);
        let unreadable =
            |e: &dyn std::fmt::Display| format!("{} is unreadable: {e}", manifest_path.display());
        let bytes = read_regular_file(&manifest_path, MAX_FILE_BYTES).map_err(|e| {
            if e.kind() == std::io::ErrorKind::NotFound {
                bundle_error(format!("{} does not exist", manifest_path.display()))
            } else {
                bundle_error(unreadable(&e))
            }
        })?;
        let text = String::from_utf8(bytes).map_err(|e| bundle_error(unreadable(&e)))?;
        // serde_json refuses nesting deeper than 128 ("recursion limit exceeded")
        let manifest: Value =
            serde_json::from_str(&text).map_err(|e| bundle_error(unreadable(&e)))?;
        let schema = manifest.get("schema").and_then(Value::as_i64);
        if !schema.is_some_and(|s| SUPPORTED_SCHEMAS.contains(&s)) {
            return Err(bundle_error(format!(
                "{}: unsupported manifest schema {} (known: {SUPPORTED_SCHEMAS:?})",
                manifest_path.display(),
                manifest.get("schema").cloned().unwrap_or(Value::Null)
            )));
        }
        let Some(kernels) = manifest.get("kernels").and_then(Value::as_array) else {
            return Err(bundle_error(format!(
                "{}: `kernels` must be a list",
                manifest_path.display()
            )));
        };
        let entries = kernels
            .iter()
            .enumerate()
            .map(|(i, k)| entry(&root, i, k))
            .collect::<Result<Vec<_>>>()?;
        Ok(Bundle { root, entries })
    }

    pub(crate) fn candidates(
        &self,
        function: &str,
        generics: &[(&str, &str)],
        sm: Option<&str>,
        module: Option<&str>,
    ) -> Vec<&BundleEntry> {
        self.entries
            .iter()
            .filter(|e| e.function == function)
            .filter(|e| module.is_none_or(|m| e.module == m))
            .filter(|e| e.matches(generics))
            .filter(|e| sm.is_none_or(|s| e.sm == s))
            .collect()
    }

    fn request_text(function: &str, generics: &[(&str, &str)], sm: Option<&str>) -> String {
        let wanted: BTreeMap<&str, &str> = generics.iter().copied().collect();
        let mut text = format!("`{function}` with generics {wanted:?}");
        if let Some(sm) = sm {
            text += &format!(" for {sm}");
        }
        text
    }

    /// The one entry of `function` whose generics include `generics` (on target `sm`, in
    /// `module`, when given).
    pub fn find(
        &self,
        function: &str,
        generics: &[(&str, &str)],
        sm: Option<&str>,
        module: Option<&str>,
    ) -> Result<&BundleEntry> {
        let candidates = self.candidates(function, generics, sm, module);
        self.one_of(candidates, function, generics, sm, false)
    }

    /// Like [`Bundle::find`], but among variants that differ in their tensor facts, the
    /// general one (no facts: it takes any arguments the contract's defaults allow).
    pub fn find_general(
        &self,
        function: &str,
        generics: &[(&str, &str)],
        sm: Option<&str>,
        module: Option<&str>,
    ) -> Result<&BundleEntry> {
        let mut candidates = self.candidates(function, generics, sm, module);
        if candidates.len() > 1 {
            candidates.retain(|e| e.is_general());
        }
        self.one_of(candidates, function, generics, sm, false)
    }

    /// Like [`Bundle::find`], choosing among variants by their tensor facts: the least
    /// relaxed, then most specialized variant whose assumptions `args` meet.
    pub fn find_for(
        &self,
        function: &str,
        generics: &[(&str, &str)],
        sm: Option<&str>,
        module: Option<&str>,
        args: &[PlanArg<'_>],
        grid: Option<&[i64]>,
    ) -> Result<&BundleEntry> {
        let mut candidates = self.candidates(function, generics, sm, module);
        if candidates.len() > 1 {
            let fitting: Vec<&BundleEntry> = candidates
                .iter()
                .copied()
                .filter(|e| fits(e, args, grid))
                .collect();
            if !fitting.is_empty() {
                let best = fitting.iter().map(|e| e.rank()).max().unwrap();
                candidates = fitting.into_iter().filter(|e| e.rank() == best).collect();
            }
        }
        self.one_of(candidates, function, generics, sm, true)
    }

    fn one_of<'a>(
        &self,
        candidates: Vec<&'a BundleEntry>,
        function: &str,
        generics: &[(&str, &str)],
        sm: Option<&str>,
        for_args: bool,
    ) -> Result<&'a BundleEntry> {
        let request = Self::request_text(function, generics, sm);
        match candidates.as_slice() {
            [] => {
                let available: Vec<String> = self.entries.iter().map(BundleEntry::label).collect();
                let available = if available.is_empty() {
                    "none".to_string()
                } else {
                    available.join("; ")
                };
                Err(Error::KernelNotFound(format!(
                    "{}: no kernel matches {request}; available: {available}",
                    self.root.display()
                )))
            }
            [one] => Ok(one),
            many => {
                let listed: Vec<String> = many.iter().map(|e| e.label()).collect();
                let mut hint = "give more generics or sm".to_string();
                if !for_args && many.iter().any(|e| !e.is_general()) {
                    hint += ", or the arguments (find_for) to choose among variants by their tensor facts";
                }
                Err(Error::AmbiguousKernel(format!(
                    "{}: {} kernels match {request}: {}; {hint}",
                    self.root.display(),
                    many.len(),
                    listed.join("; ")
                )))
            }
        }
    }

    /// Read an entry's cubin and contract, verify both digests and their consistency.
    pub fn load(&self, entry: &BundleEntry) -> Result<LoadedKernel> {
        let cubin = read_regular_file(&entry.cubin, MAX_FILE_BYTES).map_err(|e| {
            bundle_error(format!(
                "{}: cannot read {}: {e}",
                entry.label(),
                entry.cubin.display()
            ))
        })?;
        let digest = sha256_hex(&cubin);
        if digest != entry.cubin_sha256.to_lowercase() {
            return Err(Error::Integrity(format!(
                "{}: sha256 {digest} differs from the manifest's {}",
                entry.cubin.display(),
                entry.cubin_sha256
            )));
        }
        let contract = read_contract(entry)?;
        if entry.contract_sha256.is_empty() {
            return Err(Error::Integrity(format!(
                "{}: the manifest gives no contract_sha256",
                entry.label()
            )));
        }
        let actual = sha256_hex(&contract_bytes(&contract));
        if actual != entry.contract_sha256.to_lowercase() {
            return Err(Error::Integrity(format!(
                "{}: contract sha256 {actual} differs from the manifest's {}",
                entry.label(),
                entry.contract_sha256
            )));
        }
        check_consistent(entry, &contract)?;
        Ok(LoadedKernel {
            cubin,
            cubin_sha256: digest,
            contract,
        })
    }
}

fn fits(entry: &BundleEntry, args: &[PlanArg<'_>], grid: Option<&[i64]>) -> bool {
    let Ok(contract) = read_contract(entry) else {
        return false;
    };
    let Ok(spec) = validate_contract(&contract) else {
        return false;
    };
    plan_launch(&spec, args, grid).is_ok_and(|plan| serves(&spec, &plan))
}

/// Whether a variant takes a launch of this plan's size: an occupancy variant only one of at
/// least its `min_tile_blocks`.
pub fn serves(spec: &ContractSpec, plan: &LaunchPlan) -> bool {
    tile_blocks(spec, plan) >= spec.min_tile_blocks as u64
}

/// The tile blocks of a planned launch (its grid counts `cluster_blocks` CTAs a tile block).
pub fn tile_blocks(spec: &ContractSpec, plan: &LaunchPlan) -> u64 {
    let ctas: u64 = plan.grid.iter().map(|&g| g as u64).product();
    ctas / spec.cluster_blocks.max(1) as u64
}

fn str_field<'a>(raw: &'a Value, key: &str) -> Option<&'a str> {
    raw.get(key)
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
}

fn entry(root: &Path, index: usize, raw: &Value) -> Result<BundleEntry> {
    let at = format!("{}: kernels[{index}]", root.join(MANIFEST).display());
    if !raw.is_object() {
        return Err(bundle_error(format!("{at} must be an object")));
    }
    for key in ["function", "sm", "cubin", "cubin_sha256"] {
        if str_field(raw, key).is_none() {
            return Err(bundle_error(format!("{at}: missing string field `{key}`")));
        }
    }
    let contract = str_field(raw, "contract");
    if contract.is_none() && str_field(raw, "contract_json").is_none() {
        return Err(bundle_error(format!(
            "{at}: needs `contract` or `contract_json`"
        )));
    }
    let generics = match raw.get("generics") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Object(map)) => map
            .iter()
            .map(|(k, v)| (k.clone(), json_generic(v)))
            .collect(),
        Some(_) => return Err(bundle_error(format!("{at}: `generics` must be an object"))),
    };
    let facts = match raw.get("facts") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(items)) => items.clone(),
        Some(_) => return Err(bundle_error(format!("{at}: `facts` must be a list"))),
    };
    let module = match raw.get("module") {
        None => "",
        Some(Value::String(text)) => text.as_str(),
        Some(_) => return Err(bundle_error(format!("{at}: `module` must be a string"))),
    };
    Ok(BundleEntry {
        module: module.to_string(),
        function: str_field(raw, "function").unwrap().to_string(),
        generics,
        sm: str_field(raw, "sm").unwrap().to_string(),
        cubin: inside(root, str_field(raw, "cubin").unwrap(), &at)?,
        contract: contract.map(|c| inside(root, c, &at)).transpose()?,
        cubin_sha256: str_field(raw, "cubin_sha256").unwrap().to_string(),
        contract_sha256: str_field(raw, "contract_sha256").unwrap_or("").to_string(),
        specificity: specificity(&facts, &at)?,
        relaxation: relaxation(&facts, &at)?,
        min_tile_blocks: match raw.get("min_tile_blocks") {
            None | Some(Value::Null) => 0,
            Some(value) => value
                .as_u64()
                .and_then(|v| u32::try_from(v).ok())
                .ok_or_else(|| {
                    bundle_error(format!(
                        "{at}: `min_tile_blocks` must be an integer from 0 to 2^32 - 1"
                    ))
                })?,
        },
    })
}

fn specificity(facts: &[Value], at: &str) -> Result<u32> {
    let mut total = 0;
    for fact in facts {
        if !fact.is_object() {
            return Err(bundle_error(format!(
                "{at}: each of `facts` must be an object"
            )));
        }
        for key in ["dim_divisors", "stride_divisors"] {
            let divisors = match fact.get(key) {
                None | Some(Value::Null) => Vec::new(),
                Some(Value::Array(items)) => items.clone(),
                Some(_) => Vec::from([Value::Null]),
            };
            for d in divisors {
                let Some(d) = d.as_u64().filter(|&d| d > 0) else {
                    return Err(bundle_error(format!(
                        "{at}: `facts[].{key}` must be positive integers"
                    )));
                };
                total = u32::saturating_add(total, 63 - d.leading_zeros());
            }
        }
    }
    Ok(total)
}

fn relaxation(facts: &[Value], at: &str) -> Result<u32> {
    let mut total = 0;
    for fact in facts {
        let align = match fact.get("base_align") {
            None => Some(DEFAULT_BASE_ALIGN),
            Some(v) => v.as_i64(),
        };
        let Some(align) =
            align.filter(|&a| (1..=DEFAULT_BASE_ALIGN).contains(&a) && a & (a - 1) == 0)
        else {
            return Err(bundle_error(format!(
                "{at}: `facts[].base_align` must be a power of two up to 16"
            )));
        };
        let unit = match fact.get("unit_last_stride") {
            None => true,
            Some(Value::Bool(b)) => *b,
            Some(_) => {
                return Err(bundle_error(format!(
                    "{at}: `facts[].unit_last_stride` must be a boolean"
                )))
            }
        };
        total += (DEFAULT_BASE_ALIGN / align).trailing_zeros() + u32::from(!unit);
    }
    Ok(total)
}

fn inside(root: &Path, name: &str, at: &str) -> Result<PathBuf> {
    if name.contains('\0') {
        return Err(bundle_error(format!(
            "{at}: a file name must be text without NUL, got {}",
            crate::contract::py_ascii(name)
        )));
    }
    let resolved = resolve(&root.join(name));
    let base = resolve(root);
    if !resolved.starts_with(&base) {
        return Err(bundle_error(format!(
            "{at}: {name:?} points outside the bundle"
        )));
    }
    Ok(resolved)
}

/// `path` absolute, its symlinks resolved as far as it exists and the rest folded (`.`, `..`)
/// as text, as Python's `Path.resolve()` does: a missing file reached through a symlinked
/// folder is inside its bundle, and a symlink that leads out is seen even past it.
fn resolve(path: &Path) -> PathBuf {
    if let Ok(real) = path.canonicalize() {
        return real;
    }
    let path = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            std::path::Component::ParentDir => {
                out.pop();
            }
            std::path::Component::CurDir => {}
            other => out.push(other),
        }
        if let Ok(real) = out.canonicalize() {
            out = real;
        }
    }
    out
}

fn read_contract(entry: &BundleEntry) -> Result<LaunchContract> {
    let Some(path) = entry.contract.as_ref().filter(|p| p.exists()) else {
        return Err(bundle_error(format!(
            "{}: contract file missing ({}); this host reads the binary `contract` (.pb)",
            entry.label(),
            entry
                .contract
                .as_ref()
                .map_or("no `contract` in the manifest".into(), |p| p
                    .display()
                    .to_string())
        )));
    };
    let bytes = read_regular_file(path, MAX_FILE_BYTES)
        .map_err(|e| bundle_error(format!("{}: cannot read it: {e}", path.display())))?;
    LaunchContract::decode(bytes.as_slice())
        .map_err(|e| bundle_error(format!("{}: not a LaunchContract: {e}", path.display())))
}

fn check_consistent(entry: &BundleEntry, contract: &LaunchContract) -> Result<()> {
    let mut problems = Vec::new();
    let identity = contract.kernel.clone().unwrap_or_default();
    if !identity.function.is_empty() && identity.function != entry.function {
        problems.push(format!(
            "function {:?} != {:?}",
            identity.function, entry.function
        ));
    }
    let sm = contract.target.as_ref().map_or("", |t| t.sm.as_str());
    if !sm.is_empty() && sm != entry.sm {
        problems.push(format!("sm {sm:?} != {:?}", entry.sm));
    }
    let bound: BTreeMap<String, String> = contract
        .specialization
        .as_ref()
        .map(|s| {
            s.generics
                .iter()
                .map(|g| (g.name.clone(), normalize_generic(&g.value)))
                .collect()
        })
        .unwrap_or_default();
    let listed: BTreeMap<String, String> = entry.generics.iter().cloned().collect();
    if !bound.is_empty() && bound != listed {
        problems.push(format!("generics {bound:?} != {listed:?}"));
    }
    let least = contract.launch.as_ref().map_or(0, |l| l.min_tile_blocks);
    if least != entry.min_tile_blocks {
        problems.push(format!(
            "min_tile_blocks {least} != {}",
            entry.min_tile_blocks
        ));
    }
    if problems.is_empty() {
        return Ok(());
    }
    Err(bundle_error(format!(
        "{}: contract disagrees with the manifest: {}",
        entry.label(),
        problems.join("; ")
    )))
}
