//! The shared launch vectors (tests/vectors/launch, written from the Python planner by
//! `python -m tests.vectors.make_launch_vectors`): the Rust planner must give every case the
//! same verdict, grid, packed parameter bytes, error kind, parameter and message.

use std::path::PathBuf;

use cutile_host::plan::Handle;
use cutile_host::proto::LaunchContract;
use cutile_host::{plan_launch, validate_contract, DType, Error, PlanArg, Scalar, TensorLayout};
use prost::Message;
use serde_json::Value;

fn vectors_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../tests/vectors/launch")
}

struct Case {
    id: String,
    body: Value,
}

/// The vector files: every one of tests/vectors/launch, or only the file named by
/// $CUTILE_LAUNCH_VECTORS (the launch-contract fuzzer's inputs, tests/fuzz/launch_contracts.py).
fn vector_files() -> Vec<PathBuf> {
    if let Some(file) = std::env::var_os("CUTILE_LAUNCH_VECTORS") {
        return vec![PathBuf::from(file)];
    }
    let mut files: Vec<PathBuf> = std::fs::read_dir(vectors_dir())
        .expect("tests/vectors/launch exists")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    files
}

fn cases() -> Vec<Case> {
    let files = vector_files();
    let mut out = Vec::new();
    for file in files {
        let family = file.file_stem().unwrap().to_string_lossy().to_string();
        let doc: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
        for case in doc["cases"].as_array().unwrap() {
            out.push(Case {
                id: format!("{family}/{}", case["name"].as_str().unwrap()),
                body: case.clone(),
            });
        }
    }
    out
}

/// An argument description, owned (the planner borrows from it).
enum Desc {
    Tensor(TensorLayout),
    Partition(TensorLayout, Vec<i64>),
    Mapped(TensorLayout, Vec<i64>, Vec<i64>, i64),
    Scalar(Scalar),
    Moved(Handle),
    Other(String),
}

fn ints(v: &Value) -> Vec<i64> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_i64().expect("an i64"))
        .collect()
}

fn layout(t: &Value) -> TensorLayout {
    let ptr = u64::from_str_radix(t["ptr"].as_str().unwrap().trim_start_matches("0x"), 16).unwrap();
    let shape = ints(&t["shape"]);
    let dtype = DType::parse(t["dtype"].as_str().unwrap()).unwrap();
    let device = t["device"].as_i64().unwrap() as i32;
    let mut l = TensorLayout::contiguous(ptr, &shape, dtype, device);
    if !t["strides"].is_null() {
        l.strides = ints(&t["strides"]);
    }
    l
}

fn desc(arg: &Value) -> Desc {
    let (kind, body) = arg.as_object().unwrap().iter().next().unwrap();
    match kind.as_str() {
        "tensor" => Desc::Tensor(layout(body)),
        "partition" => Desc::Partition(layout(&body["tensor"]), ints(&body["tile"])),
        "mapped" => Desc::Mapped(
            layout(&body["tensor"]),
            ints(&body["tile"]),
            ints(&body["map"]),
            body["num_tile_blocks"].as_i64().unwrap(),
        ),
        "scalar" => {
            let (sort, value) = body.as_object().unwrap().iter().next().unwrap();
            Desc::Scalar(match sort.as_str() {
                "bool" => Scalar::Bool(value.as_bool().unwrap()),
                "int" => Scalar::Int(value.as_str().unwrap().parse().unwrap()),
                _ => Scalar::Float(value.as_str().unwrap().parse().unwrap()),
            })
        }
        "moved" => Desc::Moved(match body.as_str().unwrap() {
            "tensor" => Handle::Tensor,
            "partition" => Handle::Partition,
            _ => Handle::Mapped,
        }),
        _ => Desc::Other(body.as_str().unwrap().to_string()),
    }
}

fn plan_arg(d: &Desc) -> PlanArg<'_> {
    match d {
        Desc::Tensor(l) => PlanArg::Tensor(l),
        Desc::Partition(l, tile) => PlanArg::Partition { layout: l, tile },
        Desc::Mapped(l, tile, map, n) => PlanArg::Mapped {
            layout: l,
            tile,
            map,
            num_tile_blocks: *n,
        },
        Desc::Scalar(s) => PlanArg::Scalar(*s),
        Desc::Moved(h) => PlanArg::Moved(*h),
        Desc::Other(name) => PlanArg::Other(name),
    }
}

/// What the Rust host does with a case, in the vectors' JSON form.
fn outcome(case: &Value) -> Value {
    let bytes = hex::decode(case["contract_pb"].as_str().unwrap()).unwrap();
    let contract = LaunchContract::decode(bytes.as_slice()).unwrap();
    let spec = match validate_contract(&contract) {
        Ok(spec) => spec,
        Err(e) => return error_json(&e),
    };
    let descs: Vec<Desc> = case["args"].as_array().unwrap().iter().map(desc).collect();
    let args: Vec<PlanArg<'_>> = descs.iter().map(plan_arg).collect();
    let grid = (!case["grid"].is_null()).then(|| ints(&case["grid"]));
    match plan_launch(&spec, &args, grid.as_deref()) {
        Ok(plan) => serde_json::json!({"accepted": {
            "grid": plan.grid,
            "param_buffer": hex::encode(&plan.param_buffer),
        }}),
        Err(e) => error_json(&Error::from(e)),
    }
}

fn error_json(e: &Error) -> Value {
    let param = e.as_launch().and_then(|l| l.param.clone());
    serde_json::json!({"error": {"kind": e.kind_name(), "param": param, "message": e.to_string()}})
}

/// Messages that name a host language's own types differ by design: an argument of the
/// wrong kind ("got str", "got client_stubs.tensor.DeviceTensor") and a moved handle.
fn portable_message(expect: &Value) -> bool {
    !matches!(
        expect["error"]["kind"].as_str(),
        Some("ArgumentKindError" | "MovedArgumentError")
    )
}

#[test]
fn every_vector_gets_the_python_verdict() {
    let all = cases();
    let fuzzing = std::env::var_os("CUTILE_LAUNCH_VECTORS").is_some();
    assert!(
        fuzzing || all.len() >= 150,
        "only {} cases found",
        all.len()
    );
    let mut failures = Vec::new();
    for case in &all {
        let expect = &case.body["expect"];
        // a panic is a finding like any other difference, not the end of the run
        let got = match std::panic::catch_unwind(|| outcome(&case.body)) {
            Ok(got) => got,
            Err(panic) => {
                let what = panic
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                    .unwrap_or_default();
                serde_json::json!({"panic": what})
            }
        };
        let same = if expect.get("error").is_some() && portable_message(expect) {
            got == *expect
        } else if expect.get("error").is_some() {
            got["error"]["kind"] == expect["error"]["kind"]
                && got["error"]["param"] == expect["error"]["param"]
        } else {
            got == *expect
        };
        if !same {
            failures.push(format!(
                "{}:\n  expected {expect}\n  got      {got}",
                case.id
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} vectors differ:\n{}",
        failures.len(),
        all.len(),
        failures.join("\n")
    );
}
