//! Bundles on disk and kernels built from them, without a GPU: both digests verified, the
//! contract checked against its manifest entry, variants chosen by the arguments' facts, and
//! raw-pointer kernels refused unless the caller opts in.

use std::path::{Path, PathBuf};

use cutile_host::artifacts::integrity::{contract_bytes, sha256_hex};
use cutile_host::artifacts::Bundle;
use cutile_host::proto::{Assumption, LaunchContract};
use cutile_host::variants::best_variant;
use cutile_host::{
    plan_launch, validate_contract, DType, Error, Kernel, PlanArg, TensorLayout, Variants,
};
use prost::Message;
use serde_json::{json, Value};

const CUBIN: &[u8] = b"\x7fELF a cubin for the tests";

fn vector_contract(family: &str, name: &str) -> LaunchContract {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join(format!("../../../tests/vectors/launch/{family}.json"));
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let case = doc["cases"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == name)
        .unwrap();
    let bytes = hex::decode(case["contract_pb"].as_str().unwrap()).unwrap();
    LaunchContract::decode(bytes.as_slice()).unwrap()
}

/// Write `contract` (under `stem`) into `dir` and return its manifest entry.
fn write_entry(dir: &Path, stem: &str, contract: &LaunchContract, facts: Value) -> Value {
    std::fs::write(dir.join(format!("{stem}.cubin")), CUBIN).unwrap();
    let bytes = contract_bytes(contract);
    std::fs::write(dir.join(format!("{stem}.contract.pb")), &bytes).unwrap();
    json!({
        "module": "kernel", "function": "add", "generics": {"B": 128}, "sm": "sm_90",
        "cubin": format!("{stem}.cubin"), "contract": format!("{stem}.contract.pb"),
        "cubin_sha256": sha256_hex(CUBIN), "contract_sha256": sha256_hex(&bytes), "facts": facts,
    })
}

fn write_manifest(dir: &Path, kernels: Vec<Value>) {
    let manifest = json!({"schema": 1, "kernels": kernels});
    std::fs::write(dir.join("manifest.json"), manifest.to_string()).unwrap();
}

fn aligned(dir: &Path) -> LaunchContract {
    let mut c = vector_contract("accepted", "add");
    // the variant for extents that are multiples of 8
    for param in 0..3 {
        c.assumptions.push(Assumption {
            param,
            kind: 2, // DIM_DIV
            axis: 0,
            value: 8,
        });
    }
    let _ = dir;
    c
}

/// A bundle of add<B=128> twice: the general kernel and a variant for extents divisible by 8.
fn general_and_special(dir: &Path) -> Bundle {
    let general = vector_contract("accepted", "add");
    let special = aligned(dir);
    let facts = json!([{"param": "z", "dim_divisors": [8]}, {"param": "x", "dim_divisors": [8]},
                       {"param": "y", "dim_divisors": [8]}]);
    write_manifest(
        dir,
        vec![
            write_entry(dir, "general", &general, json!([])),
            write_entry(dir, "special", &special, facts),
        ],
    );
    Bundle::open(dir).unwrap()
}

/// add's layouts: z (of `dtype`), x and y of `n` f32 each, far apart.
fn add_layouts(n: i64, dtype: DType) -> (TensorLayout, TensorLayout, TensorLayout) {
    let at = |ptr: u64, dtype: DType| TensorLayout::contiguous(ptr, &[n], dtype, 0);
    (
        at(1 << 40, dtype),
        at(2 << 40, DType::F32),
        at(3 << 40, DType::F32),
    )
}

/// add's arguments: z partitioned in tiles of 128, x and y.
fn add_args<'a>(z: &'a TensorLayout, x: &'a TensorLayout, y: &'a TensorLayout) -> [PlanArg<'a>; 3] {
    [
        PlanArg::Partition {
            layout: z,
            tile: &[128],
        },
        PlanArg::Tensor(x),
        PlanArg::Tensor(y),
    ]
}

#[test]
fn a_bundle_entry_loads_verified() {
    let dir = tempfile::tempdir().unwrap();
    let contract = vector_contract("accepted", "add");
    write_manifest(
        dir.path(),
        vec![write_entry(dir.path(), "add", &contract, json!([]))],
    );
    let bundle = Bundle::open(dir.path()).unwrap();
    let entry = bundle
        .find("add", &[("B", "128")], Some("sm_90"), None)
        .unwrap();
    let loaded = bundle.load(entry).unwrap();
    assert_eq!(loaded.cubin, CUBIN);
    assert_eq!(loaded.contract, contract);
    let kernel = Kernel::new(loaded.cubin, &loaded.contract, false).unwrap();
    assert_eq!(kernel.name(), "add");
    match bundle.find("add", &[("B", "256")], None, None) {
        Err(Error::KernelNotFound(text)) => assert!(text.contains("kernel::add<B=128> for sm_90")),
        other => panic!("{other:?}"),
    }
}

#[test]
fn tampering_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let contract = vector_contract("accepted", "add");
    let mut entry = write_entry(dir.path(), "add", &contract, json!([]));
    write_manifest(dir.path(), vec![entry.clone()]);
    std::fs::write(dir.path().join("add.cubin"), b"\x7fELF another").unwrap();
    let bundle = Bundle::open(dir.path()).unwrap();
    let found = bundle.find("add", &[], None, None).unwrap();
    assert_eq!(
        bundle.load(found).unwrap_err().kind_name(),
        "IntegrityError"
    );

    std::fs::write(dir.path().join("add.cubin"), CUBIN).unwrap();
    let mut changed = contract.clone();
    changed.launch.as_mut().unwrap().param_buffer_bytes += 8;
    std::fs::write(dir.path().join("add.contract.pb"), contract_bytes(&changed)).unwrap();
    let bundle = Bundle::open(dir.path()).unwrap();
    let found = bundle.find("add", &[], None, None).unwrap();
    assert!(bundle
        .load(found)
        .unwrap_err()
        .to_string()
        .contains("contract sha256"));

    entry["contract_sha256"] = json!("");
    write_manifest(dir.path(), vec![entry.clone()]);
    let bundle = Bundle::open(dir.path()).unwrap();
    let found = bundle.find("add", &[], None, None).unwrap();
    assert!(bundle
        .load(found)
        .unwrap_err()
        .to_string()
        .contains("no contract_sha256"));

    // hostile manifest fields are refused as the Python host refuses them
    for (field, value, message) in [
        ("cubin", json!("../outside.cubin"), "outside the bundle"),
        (
            "contract",
            json!("c.pb\u{0}.txt"),
            "text without NUL, got 'c.pb\\x00.txt'",
        ),
        ("module", json!(null), "`module` must be a string"),
        ("module", json!(5), "`module` must be a string"),
    ] {
        let mut hostile = entry.clone();
        hostile[field] = value;
        write_manifest(dir.path(), vec![hostile]);
        let error = Bundle::open(dir.path()).unwrap_err().to_string();
        assert!(error.contains(message), "{field}: {error}");
    }
}

#[test]
fn variants_are_chosen_by_the_arguments() {
    let dir = tempfile::tempdir().unwrap();
    let bundle = general_and_special(dir.path());
    assert_eq!(
        bundle.find("add", &[], None, None).unwrap_err().kind_name(),
        "AmbiguousKernelError"
    );
    assert_eq!(
        bundle
            .find_general("add", &[], None, None)
            .unwrap()
            .specificity,
        0
    );
    let pick = |n: i64| {
        let (z, x, y) = add_layouts(n, DType::F32);
        bundle
            .find_for("add", &[], None, None, &add_args(&z, &x, &y), None)
            .unwrap()
            .specificity
    };
    assert_eq!(
        pick(1024),
        9,
        "multiples of 8 take the specialized variant (log2 8 x 3)"
    );
    assert_eq!(pick(1001), 0, "others the general one");
}

#[test]
fn a_bundle_kernel_launches_the_best_variant_the_arguments_meet() {
    let dir = tempfile::tempdir().unwrap();
    let bundle = general_and_special(dir.path());
    // no choice for the caller: both variants load, the specialized one first
    let variants = bundle.kernel("add", &[], None, None, false).unwrap();
    assert_eq!(variants.kernels().len(), 2);
    assert!(
        variants.labels()[0].ends_with("specialized (9)"),
        "{:?}",
        variants.labels()
    );
    let pick = |n: i64, dtype: DType| {
        let (z, x, y) = add_layouts(n, dtype);
        best_variant(variants.kernels(), &add_args(&z, &x, &y), None)
    };
    assert_eq!(
        pick(1024, DType::F32),
        0,
        "multiples of 8: the specialized variant"
    );
    assert_eq!(pick(1001, DType::F32), 1, "others: the general one");
    // arguments every variant refuses alike (an f16 output) go to the best one, whose
    // launch reports the dtype, not an assumption
    assert_eq!(pick(1001, DType::F16), 0);
}

#[test]
fn a_bundle_kernel_of_unrelated_entries_is_ambiguous() {
    let dir = tempfile::tempdir().unwrap();
    let contract = vector_contract("accepted", "add");
    let mut other = write_entry(dir.path(), "b256", &contract, json!([]));
    other["generics"] = json!({"B": 256});
    write_manifest(
        dir.path(),
        vec![write_entry(dir.path(), "b128", &contract, json!([])), other],
    );
    let bundle = Bundle::open(dir.path()).unwrap();
    let error = |found: Result<Variants, Error>| found.err().unwrap().kind_name();
    assert_eq!(
        error(bundle.kernel("add", &[], None, None, false)),
        "AmbiguousKernelError"
    );
    assert_eq!(
        error(bundle.kernel("mul", &[], None, None, false)),
        "KernelNotFoundError"
    );
    let one = bundle
        .kernel("add", &[("B", "128")], None, None, false)
        .unwrap();
    assert_eq!(one.kernels().len(), 1);
}

#[test]
fn raw_pointer_kernels_need_the_opt_in() {
    let contract = vector_contract("pointers", "addresses");
    let refused = Kernel::new(CUBIN.to_vec(), &contract, false).unwrap_err();
    assert!(
        refused.to_string().contains("raw pointers (`y`, `x`)"),
        "{refused}"
    );
    let kernel = Kernel::new(CUBIN.to_vec(), &contract, true).unwrap();
    assert!(kernel.spec().host_grid());
    let spec = validate_contract(&contract).unwrap();
    let args = [
        PlanArg::Scalar(0x7f20_0000_0000i64.into()),
        PlanArg::Scalar(0x7f10_0000_0000i64.into()),
        PlanArg::Scalar(2.0f32.into()),
        PlanArg::Scalar(4096.into()),
    ];
    assert_eq!(
        plan_launch(&spec, &args, Some(&[4, 1, 1])).unwrap().grid,
        [4, 1, 1]
    );
}

#[test]
fn unchecked_kernels_need_the_opt_in() {
    let mut contract = vector_contract("accepted", "add");
    contract
        .safety
        .get_or_insert_with(Default::default)
        .unchecked_accesses = true;
    assert!(Kernel::new(CUBIN.to_vec(), &contract, false)
        .unwrap_err()
        .to_string()
        .contains("unchecked accesses"));
    assert!(Kernel::new(CUBIN.to_vec(), &contract, true).is_ok());
}

#[test]
fn a_kernel_that_waits_for_prior_grids_says_so() {
    let mut contract = vector_contract("accepted", "add");
    assert!(!validate_contract(&contract).unwrap().waits_for_prior_grids);
    contract.launch.as_mut().unwrap().waits_for_prior_grids = true;
    // refused until its cubin can wait: bytecode 13.4 or later (launch_vectors checks the rest)
    assert!(matches!(
        validate_contract(&contract),
        Err(Error::Contract(message)) if message.contains("bytecode ? for sm_90")
    ));
    contract.target.as_mut().unwrap().bytecode_version = "13.4".to_string();
    assert!(validate_contract(&contract).unwrap().waits_for_prior_grids);
    let kernel = Kernel::new(CUBIN.to_vec(), &contract, false).unwrap();
    assert!(kernel.spec().waits_for_prior_grids);
}

#[test]
fn an_occupancy_variant_launches_first_but_only_with_its_many_tile_blocks() {
    let dir = tempfile::tempdir().unwrap();
    let general = vector_contract("accepted", "add");
    let mut occupancy = vector_contract("accepted", "add");
    occupancy.launch.as_mut().unwrap().min_tile_blocks = 64;
    let mut occupancy_entry = write_entry(dir.path(), "occupancy", &occupancy, json!([]));
    occupancy_entry["min_tile_blocks"] = json!(64);
    write_manifest(
        dir.path(),
        vec![
            write_entry(dir.path(), "general", &general, json!([])),
            occupancy_entry.clone(),
        ],
    );
    let bundle = Bundle::open(dir.path()).unwrap();
    assert_eq!(
        bundle
            .find_general("add", &[], None, None)
            .unwrap()
            .min_tile_blocks,
        0
    );
    let variants = bundle.kernel("add", &[], None, None, false).unwrap();
    assert!(
        variants.labels()[0].ends_with("for 64+ tile blocks"),
        "{:?}",
        variants.labels()
    );
    let pick = |n: i64| {
        let (z, x, y) = add_layouts(n, DType::F32);
        best_variant(variants.kernels(), &add_args(&z, &x, &y), None)
    };
    assert_eq!(
        pick(64 * 128),
        0,
        "64 tile blocks of 128: the occupancy variant"
    );
    assert_eq!(pick(63 * 128), 1, "63: the general kernel");
    let found = |n: i64| {
        let (z, x, y) = add_layouts(n, DType::F32);
        bundle
            .find_for("add", &[], None, None, &add_args(&z, &x, &y), None)
            .unwrap()
            .min_tile_blocks
    };
    assert_eq!((found(64 * 128), found(63 * 128)), (64, 0));

    // the manifest must say what the contract says, and say it as a count
    for (value, message) in [
        (json!(32), "min_tile_blocks 64 != 32"),
        (json!(-1), "`min_tile_blocks` must be an integer"),
        (json!("64"), "`min_tile_blocks` must be an integer"),
    ] {
        let mut lying = occupancy_entry.clone();
        lying["min_tile_blocks"] = value;
        write_manifest(dir.path(), vec![lying]);
        let error = match Bundle::open(dir.path()) {
            Err(error) => error.to_string(),
            Ok(bundle) => {
                let entry = bundle.find("add", &[], None, None).unwrap();
                bundle.load(entry).unwrap_err().to_string()
            }
        };
        assert!(error.contains(message), "{error}");
    }
}
