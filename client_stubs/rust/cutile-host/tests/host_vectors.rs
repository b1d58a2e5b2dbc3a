//! The artifact-layer vectors the Python client wrote (tests/vectors/host) and the contracts
//! of the launch vectors: the Rust host computes the same request keys, the same contract
//! bytes (so the same contract digests), the same integrity verdicts and the same measured
//! tensor facts (a served kernel's specialization requests).

use std::path::PathBuf;

use cutile_host::artifacts::integrity::{contract_bytes, verify};
use cutile_host::artifacts::ArtifactCache;
use cutile_host::client::facts::facts_for;
use cutile_host::client::{request_key, Source};
use cutile_host::proto::{Artifact, CompileRequest, LaunchContract, TensorFacts};
use cutile_host::{DType, TensorLayout};
use prost::Message;
use serde_json::Value;

fn vectors() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../tests/vectors")
}

fn read(path: PathBuf) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array().map_or(Vec::new(), |a| {
        a.iter().map(|s| s.as_str().unwrap().to_string()).collect()
    })
}

fn u32s(v: &Value) -> Vec<u32> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_u64().unwrap() as u32)
        .collect()
}

/// The request `Source` builds from a case's `build_request` arguments.
fn source_of(inputs: &Value) -> Source {
    let mut source = Source::new(
        inputs["file_name"].as_str().unwrap(),
        inputs["source_text"].as_str().unwrap(),
        inputs["entry"].as_str().unwrap(),
    );
    for (k, v) in inputs["generics"].as_object().unwrap() {
        source = source.generic(k, v.as_str().unwrap());
    }
    if let Some(extra) = inputs.get("extra_sources").and_then(Value::as_object) {
        source.extra = extra
            .iter()
            .map(|(k, v)| (k.clone(), v.as_str().unwrap().to_string()))
            .collect();
    }
    source.generic_args = strings(&inputs["generic_args"]);
    source.target = inputs["target"].as_str().unwrap().to_string();
    source.opt_level = inputs
        .get("opt_level")
        .and_then(Value::as_u64)
        .map(|v| v as u32);
    source.host_arch = inputs
        .get("host_arch")
        .and_then(Value::as_str)
        .unwrap_or("")
        .into();
    source.lineinfo = inputs
        .get("lineinfo")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    source.exact_accumulators = inputs
        .get("exact_accumulators")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    source.exact_f32_products = inputs
        .get("exact_f32_products")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    source.plain_launch = !inputs
        .get("early_launch")
        .and_then(Value::as_bool)
        .unwrap_or(true);
    source.skip_cache = inputs
        .get("skip_cache")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    source.specialization = inputs["specialization"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| TensorFacts {
            param: f["param"].as_str().unwrap().into(),
            dim_divisors: u32s(&f["dim_divisors"]),
            stride_divisors: u32s(&f["stride_divisors"]),
            base_align: f["base_align"].as_u64().unwrap() as u32,
            any_last_stride: f["any_last_stride"].as_bool().unwrap(),
        })
        .collect();
    source
}

#[test]
fn request_keys_match_python() {
    // $CUTILE_REQUEST_KEY_VECTORS: the compile-request fuzzer's inputs instead
    // (tests/fuzz/compile_requests.py), requests without the `inputs` a Source is built from
    let fuzzed = std::env::var_os("CUTILE_REQUEST_KEY_VECTORS").map(PathBuf::from);
    let doc = read(
        fuzzed
            .clone()
            .unwrap_or_else(|| vectors().join("host/request_keys.json")),
    );
    let cases = doc["cases"].as_array().unwrap();
    assert!(fuzzed.is_some() || cases.len() >= 8);
    let mut differ = Vec::new();
    for case in cases {
        let name = case["name"].as_str().unwrap();
        let key = case["key"].as_str().unwrap();
        let bytes = hex::decode(case["request_pb"].as_str().unwrap()).unwrap();
        let decoded = CompileRequest::decode(bytes.as_slice()).unwrap();
        if fuzzed.is_some() {
            if request_key(&decoded) != key {
                differ.push(format!("{name} ({})", case["about"]));
            }
            continue;
        }
        assert_eq!(request_key(&decoded), key, "{name}: decoded request");
        let built = source_of(&case["inputs"]).request();
        assert_eq!(
            built, decoded,
            "{name}: Source builds what build_request built"
        );
        assert_eq!(request_key(&built), key, "{name}: built request");
    }
    assert!(
        differ.is_empty(),
        "{} of {} keys differ: {}",
        differ.len(),
        cases.len(),
        differ.join("; ")
    );
}

#[test]
fn every_contract_serializes_as_python_does() {
    let mut count = 0;
    for file in std::fs::read_dir(vectors().join("launch")).unwrap() {
        let doc = read(file.unwrap().path());
        for case in doc["cases"].as_array().unwrap() {
            let bytes = hex::decode(case["contract_pb"].as_str().unwrap()).unwrap();
            let contract = LaunchContract::decode(bytes.as_slice()).unwrap();
            assert_eq!(contract_bytes(&contract), bytes, "{}", case["name"]);
            count += 1;
        }
    }
    assert!(count >= 150);
}

#[test]
fn integrity_verdicts_match_python() {
    let doc = read(vectors().join("host/artifacts.json"));
    let key = hex::decode(doc["signing_key"].as_str().unwrap()).unwrap();
    for case in doc["cases"].as_array().unwrap() {
        let name = case["name"].as_str().unwrap();
        let bytes = hex::decode(case["artifact_pb"].as_str().unwrap()).unwrap();
        let artifact = Artifact::decode(bytes.as_slice()).unwrap();
        assert_eq!(
            artifact.encode_to_vec(),
            bytes,
            "{name}: the artifact re-encodes alike"
        );
        for (holder, signing_key) in [("with_key", Some(key.as_slice())), ("without_key", None)] {
            let verdict = match verify(&artifact, name, signing_key) {
                Ok(()) => "ok".to_string(),
                Err(e) => e.kind_name().to_string(),
            };
            assert_eq!(
                verdict,
                case["expect"][holder].as_str().unwrap(),
                "{name} {holder}"
            );
        }
        if case["expect"]["with_key"] == "ok" {
            let ours = cutile_host::artifacts::integrity::signature(&key, &artifact);
            assert_eq!(hex::encode(ours), case["signature"].as_str().unwrap());
        }
    }
}

#[test]
fn the_cache_writes_the_python_layout() {
    let dir = tempfile::tempdir().unwrap();
    let cache = ArtifactCache::new(dir.path());
    let key = "3ea69d29daf8642c10609ae47706c200ceead3283ccdb1f9398fc79b815a4f7f";
    let path = cache.put(key, b"payload").unwrap();
    assert_eq!(path, dir.path().join("3e").join(format!("{key}.bin")));
    let mut expected = b"cutile-client-cache v1\n".to_vec();
    expected.extend_from_slice(
        b"239f59ed55e737c77147cf55ad0c1b030b6d7ee748a7426952f9b852d5a935e5\npayload",
    );
    assert_eq!(std::fs::read(&path).unwrap(), expected);
    assert_eq!(cache.get(key).unwrap().unwrap(), b"payload");
    std::fs::write(&path, b"cutile-client-cache v1\ngarbage").unwrap();
    assert_eq!(cache.get(key).unwrap(), None, "a corrupt entry is a miss");
    assert!(!path.exists(), "and is removed");
    assert!(cache.put("ABC", b"x").is_err());
}

#[test]
fn measured_facts_match_python() {
    let doc = read(vectors().join("host/facts.json"));
    let cases = doc["cases"].as_array().unwrap();
    assert!(cases.len() >= 8);
    for case in cases {
        let name = case["name"].as_str().unwrap();
        let tensors: Vec<(String, TensorLayout)> = case["tensors"]
            .as_object()
            .unwrap()
            .iter()
            .map(|(param, t)| {
                let ptr = t["ptr"].as_str().unwrap().trim_start_matches("0x");
                let ptr = u64::from_str_radix(ptr, 16).unwrap();
                let shape: Vec<i64> = t["shape"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|v| v.as_i64().unwrap())
                    .collect();
                let dtype = DType::parse(t["dtype"].as_str().unwrap()).unwrap();
                let mut layout = TensorLayout::contiguous(ptr, &shape, dtype, 0);
                if let Some(strides) = t["strides"].as_array() {
                    layout.strides = strides.iter().map(|v| v.as_i64().unwrap()).collect();
                }
                (param.clone(), layout)
            })
            .collect();
        let named: Vec<(&str, &TensorLayout)> =
            tensors.iter().map(|(n, l)| (n.as_str(), l)).collect();
        let got: Vec<String> = facts_for(&named)
            .iter()
            .map(|f| hex::encode(f.encode_to_vec()))
            .collect();
        assert_eq!(got, strings(&case["facts_pb"]), "{name}");
    }
}
