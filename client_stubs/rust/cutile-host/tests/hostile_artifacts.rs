//! Hostile bundle folders and client cache entries (an unpacked archive, a shared cache
//! folder): each is a clear error or a cache miss, never a hang, a panic, a stack overflow or
//! an unbounded allocation. The Python host's reader refuses the same things
//! (`tests/client_stubs/test_bundle.py`).
#![cfg(unix)]

use std::fs::{File, OpenOptions};
use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::thread;
use std::time::Duration;

use cutile_host::artifacts::integrity::{contract_bytes, sha256_hex, MAX_CUBIN_BYTES};
use cutile_host::artifacts::{ArtifactCache, Bundle, BundleEntry};
use cutile_host::proto::LaunchContract;
use cutile_host::Error;
use prost::Message;
use serde_json::{json, Value};

const CUBIN: &[u8] = b"\x7fELF a cubin for the tests";
/// How long a read may take before the test calls it a hang.
const DEADLINE: Duration = Duration::from_secs(5);
/// A sparse file this large costs no disk; reading it whole would exhaust memory.
const TIB: u64 = 1 << 40;

fn vector_contract() -> LaunchContract {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../../tests/vectors/launch/accepted.json");
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let case = doc["cases"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "add")
        .unwrap();
    let bytes = hex::decode(case["contract_pb"].as_str().unwrap()).unwrap();
    LaunchContract::decode(bytes.as_slice()).unwrap()
}

/// A bundle of one kernel, add<B=128> for sm_90, in `dir`; returns its manifest entry.
fn write_bundle(dir: &Path) -> Value {
    std::fs::write(dir.join("add.cubin"), CUBIN).unwrap();
    let bytes = contract_bytes(&vector_contract());
    std::fs::write(dir.join("add.contract.pb"), &bytes).unwrap();
    let entry = json!({
        "module": "kernel", "function": "add", "generics": {"B": 128}, "sm": "sm_90",
        "cubin": "add.cubin", "contract": "add.contract.pb",
        "cubin_sha256": sha256_hex(CUBIN), "contract_sha256": sha256_hex(&bytes),
    });
    write_manifest(
        dir,
        &json!({"schema": 1, "kernels": [entry.clone()]}).to_string(),
    );
    entry
}

fn write_manifest(dir: &Path, text: &str) {
    std::fs::write(dir.join("manifest.json"), text).unwrap();
}

/// Open the bundle in `dir` and load its one kernel: the error's text, if any.
fn open_and_load(dir: &Path) -> Result<(), String> {
    let bundle = Bundle::open(dir).map_err(|e| bundle_error(&e))?;
    let entry = bundle.find("add", &[], None, None).unwrap();
    bundle.load(entry).map(drop).map_err(|e| bundle_error(&e))
}

/// The text of `error`, which must be a BundleError.
fn bundle_error(error: &Error) -> String {
    assert_eq!(error.kind_name(), "BundleError", "{error}");
    error.to_string()
}

fn mkfifo(path: &Path) {
    let _ = std::fs::remove_file(path);
    let made = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .unwrap();
    assert!(made.success(), "mkfifo {}", path.display());
}

/// A file of `size` bytes that takes no disk (a hole).
fn sparse(path: &Path, size: u64) {
    File::create(path).unwrap().set_len(size).unwrap();
}

/// `body`'s result when it comes within DEADLINE; else the test fails instead of blocking the
/// run: the FIFO's other end is opened (read-write, which does not block on Linux) and closed,
/// so a reader blocked on it sees end of file and its thread ends.
fn within_deadline<T: Send + 'static>(fifo: &Path, body: impl FnOnce() -> T + Send + 'static) -> T {
    let (sender, receiver) = mpsc::channel();
    let worker = thread::spawn(move || sender.send(body()).unwrap());
    match receiver.recv_timeout(DEADLINE) {
        Ok(value) => {
            worker.join().unwrap();
            value
        }
        Err(RecvTimeoutError::Disconnected) => {
            std::panic::resume_unwind(worker.join().unwrap_err());
        }
        Err(RecvTimeoutError::Timeout) => {
            drop(OpenOptions::new().read(true).write(true).open(fifo));
            let _ = worker.join();
            panic!("blocked for {DEADLINE:?} reading {}", fifo.display());
        }
    }
}

#[test]
fn a_deeply_nested_manifest_is_a_bundle_error() {
    let dir = tempfile::tempdir().unwrap();
    let deep = "[".repeat(100_000);
    for text in [
        deep.clone(),
        format!(r#"{{"schema": 1, "kernels": {deep}}}"#),
        format!(r#"{{"schema": 1, "kernels": [{{"generics": {{"B": {deep}}}}}]}}"#),
    ] {
        write_manifest(dir.path(), &text);
        let error = bundle_error(&Bundle::open(dir.path()).unwrap_err());
        assert!(
            error.contains("is unreadable: recursion limit exceeded"),
            "{error}"
        );
    }
    // nesting a parser takes (serde_json's limit is 128) reaches the generic's normalization
    let mut entry = write_bundle(dir.path());
    entry["generics"]["B"] =
        serde_json::from_str(&format!("{}{}", "[".repeat(100), "]".repeat(100))).unwrap();
    write_manifest(
        dir.path(),
        &json!({"schema": 1, "kernels": [entry]}).to_string(),
    );
    let bundle = Bundle::open(dir.path()).unwrap();
    assert_eq!(bundle.entries[0].generic("B").unwrap().len(), 200);
}

#[test]
fn a_non_integer_schema_is_a_bundle_error() {
    let dir = tempfile::tempdir().unwrap();
    for (schema, shown) in [
        ("[1]", "[1]"),
        ("true", "true"),
        ("1.0", "1.0"),
        (r#""1""#, r#""1""#),
        (r#"{"1": 1}"#, r#"{"1":1}"#),
        ("null", "null"),
        ("3", "3"),
        ("-1", "-1"),
        ("18446744073709551617", "1.8446744073709552e+19"),
    ] {
        write_manifest(
            dir.path(),
            &format!(r#"{{"schema": {schema}, "kernels": []}}"#),
        );
        let error = bundle_error(&Bundle::open(dir.path()).unwrap_err());
        assert!(
            error.contains(&format!(
                "unsupported manifest schema {shown} (known: [1, 2])"
            )),
            "{schema}: {error}"
        );
    }
    for text in [r#"{"kernels": []}"#, "[]", "1", r#""schema""#] {
        write_manifest(dir.path(), text);
        let error = bundle_error(&Bundle::open(dir.path()).unwrap_err());
        assert!(
            error.contains("unsupported manifest schema null"),
            "{text}: {error}"
        );
    }
    write_manifest(dir.path(), r#"{"schema": 1e400, "kernels": []}"#);
    let error = bundle_error(&Bundle::open(dir.path()).unwrap_err());
    assert!(
        error.contains("is unreadable: number out of range"),
        "{error}"
    );
}

#[test]
fn a_fifo_in_a_bundle_is_a_bundle_error_not_a_hang() {
    for name in ["manifest.json", "add.cubin", "add.contract.pb"] {
        let dir = tempfile::tempdir().unwrap();
        write_bundle(dir.path());
        let fifo = dir.path().join(name);
        mkfifo(&fifo);
        let root = dir.path().to_path_buf();
        let error = within_deadline(&fifo, move || open_and_load(&root)).unwrap_err();
        assert!(error.contains(name), "{name}: {error}");
        assert!(error.contains("not a regular file"), "{name}: {error}");
    }
}

#[test]
fn a_folder_in_place_of_a_bundle_file_is_a_bundle_error() {
    for name in ["manifest.json", "add.cubin", "add.contract.pb"] {
        let dir = tempfile::tempdir().unwrap();
        write_bundle(dir.path());
        let folder = dir.path().join(name);
        std::fs::remove_file(&folder).unwrap();
        std::fs::create_dir(&folder).unwrap();
        let error = open_and_load(dir.path()).unwrap_err();
        assert!(error.contains(name), "{name}: {error}");
        assert!(error.contains("not a regular file"), "{name}: {error}");
    }
}

#[test]
fn a_huge_bundle_file_is_a_bundle_error_not_read_whole() {
    let over = format!("larger than {MAX_CUBIN_BYTES} bytes");
    for (name, size) in [
        ("manifest.json", TIB),
        ("add.cubin", TIB),
        ("add.contract.pb", TIB),
        ("add.cubin", MAX_CUBIN_BYTES as u64 + 1),
        ("manifest.json", MAX_CUBIN_BYTES as u64 + 1),
    ] {
        let dir = tempfile::tempdir().unwrap();
        write_bundle(dir.path());
        sparse(&dir.path().join(name), size);
        let error = open_and_load(dir.path()).unwrap_err();
        assert!(error.contains(name), "{name} ({size} bytes): {error}");
        assert!(error.contains(&over), "{name} ({size} bytes): {error}");
    }
}

#[test]
fn a_device_in_place_of_a_bundle_file_is_a_bundle_error() {
    // a manifest that is a link to /dev/zero (bytes without end, all valid UTF-8)
    let dir = tempfile::tempdir().unwrap();
    write_bundle(dir.path());
    let manifest = dir.path().join("manifest.json");
    std::fs::remove_file(&manifest).unwrap();
    std::os::unix::fs::symlink("/dev/zero", &manifest).unwrap();
    let error = open_and_load(dir.path()).unwrap_err();
    assert!(
        error.contains("manifest.json is unreadable: not a regular file"),
        "{error}"
    );

    // a cubin or contract linked to it points outside the bundle
    for name in ["add.cubin", "add.contract.pb"] {
        let dir = tempfile::tempdir().unwrap();
        write_bundle(dir.path());
        let path = dir.path().join(name);
        std::fs::remove_file(&path).unwrap();
        std::os::unix::fs::symlink("/dev/zero", &path).unwrap();
        let error = open_and_load(dir.path()).unwrap_err();
        assert!(
            error.contains(&format!("{name:?} points outside the bundle")),
            "{error}"
        );
    }

    // and an entry made in code (its fields are public) is read with the same checks
    let dir = tempfile::tempdir().unwrap();
    write_bundle(dir.path());
    let bundle = Bundle::open(dir.path()).unwrap();
    let entry = bundle.find("add", &[], None, None).unwrap();
    for (cubin, contract) in [
        ("/dev/zero", entry.contract.clone()),
        ("", Some("/dev/zero".into())),
    ] {
        let hostile = BundleEntry {
            cubin: if cubin.is_empty() {
                entry.cubin.clone()
            } else {
                cubin.into()
            },
            contract,
            ..entry.clone()
        };
        let error = bundle_error(&bundle.load(&hostile).unwrap_err());
        assert!(error.contains("/dev/zero"), "{error}");
        assert!(error.contains("not a regular file"), "{error}");
    }
}

#[test]
fn a_file_name_outside_the_bundle_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let bundle_dir = dir.path().join("bundle");
    std::fs::create_dir(&bundle_dir).unwrap();
    let entry = write_bundle(&bundle_dir);
    std::fs::write(dir.path().join("x"), CUBIN).unwrap();
    std::os::unix::fs::symlink(dir.path().join("x"), bundle_dir.join("link")).unwrap();
    std::os::unix::fs::symlink(dir.path(), bundle_dir.join("up")).unwrap();
    let absolute = dir.path().join("x").display().to_string();
    for field in ["cubin", "contract"] {
        for name in [
            "../x",
            "sub/../../x",
            "./../bundle/../x",
            "/etc/passwd",
            "/dev/zero",
            "/",
            &absolute,
            "link",
            "up/x",
            "up/bundle/../x",
            "..",
        ] {
            let mut hostile = entry.clone();
            hostile[field] = json!(name);
            write_manifest(
                &bundle_dir,
                &json!({"schema": 1, "kernels": [hostile]}).to_string(),
            );
            let error = bundle_error(&Bundle::open(&bundle_dir).unwrap_err());
            assert!(
                error.contains(&format!("{name:?} points outside the bundle")),
                "{field} = {name}: {error}"
            );
        }
    }
    // a name that goes out and back in stays inside
    let mut roundabout = entry.clone();
    roundabout["cubin"] = json!("../bundle/add.cubin");
    write_manifest(
        &bundle_dir,
        &json!({"schema": 1, "kernels": [roundabout]}).to_string(),
    );
    open_and_load(&bundle_dir).unwrap();
}

const KEY: &str = "3ea69d29daf8642c10609ae47706c200ceead3283ccdb1f9398fc79b815a4f7f";

#[test]
fn a_hostile_cache_entry_is_a_miss_not_a_hang() {
    let dir = tempfile::tempdir().unwrap();
    let cache = ArtifactCache::new(dir.path());
    let path = cache.path_for(KEY).unwrap();
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let fifo = path.clone();
    let make: [(&str, &dyn Fn()); 4] = [
        ("a FIFO", &|| mkfifo(&path)),
        ("a link to /dev/zero", &|| {
            std::os::unix::fs::symlink("/dev/zero", &path).unwrap()
        }),
        ("1 TiB", &|| sparse(&path, TIB)),
        ("over the cap", &|| {
            sparse(&path, 2 * MAX_CUBIN_BYTES as u64 + 100)
        }),
    ];
    for (what, make) in make {
        let _ = std::fs::remove_file(&path);
        make();
        let reader = cache.clone();
        let got = within_deadline(&fifo, move || reader.get(KEY).map_err(|e| e.to_string()));
        assert_eq!(got, Ok(None), "{what}");
        assert!(
            std::fs::symlink_metadata(&path).is_err(),
            "{what} is removed"
        );
        // and the next store replaces it
        cache.put(KEY, b"payload").unwrap();
        assert_eq!(cache.get(KEY).unwrap().unwrap(), b"payload", "{what}");
    }
}

#[test]
fn a_missing_file_of_a_bundle_reached_through_a_symlink_is_missing_not_outside() {
    let dir = tempfile::tempdir().unwrap();
    let real = dir.path().join("real");
    std::fs::create_dir(&real).unwrap();
    write_bundle(&real);
    let link = dir.path().join("link");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    for root in [link.clone(), link.join("."), real.join("../link")] {
        open_and_load(&root).unwrap();
        std::fs::remove_file(real.join("add.cubin")).unwrap();
        let error = open_and_load(&root).unwrap_err();
        assert!(error.contains("add.cubin: No such file"), "{error}");
        std::fs::write(real.join("add.cubin"), CUBIN).unwrap();
    }
    // still outside: a missing name past a symlink that leads out
    std::os::unix::fs::symlink(dir.path(), real.join("up")).unwrap();
    let mut entry = write_bundle(&real);
    entry["cubin"] = json!("up/real/../missing.cubin");
    write_manifest(&real, &json!({"schema": 1, "kernels": [entry]}).to_string());
    for root in [&link, &real] {
        let error = bundle_error(&Bundle::open(root).unwrap_err());
        assert!(error.contains("points outside the bundle"), "{error}");
    }
}
