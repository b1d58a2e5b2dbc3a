//! The Rust client against a real `cutile-serve` (the Python daemon, started here on a free
//! port with a bearer token): capabilities, a compile that fails with rendered diagnostics,
//! a real compile (tileiras) verified and cached where the Python client looks, a cache hit
//! with the daemon gone, FindMissing, chunked GetArtifact and NOT_FOUND; a served kernel
//! specialized per measured facts.
//!
//! The daemon runs on the Python of `$CUTILE_PYTHON` (CI: the repository's `.venv`); without
//! one, the test says so and passes.

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};

use cutile_host::client::{CompileClient, Connection, Source};
use cutile_host::{DType, Error, PlanArg, TensorLayout};

const TOKEN: &str = "rust-host-test-token";

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../..")
        .canonicalize()
        .unwrap()
}

fn python() -> Option<PathBuf> {
    let explicit = std::env::var_os("CUTILE_PYTHON").map(PathBuf::from);
    let local = repo().join(".venv/bin/python");
    explicit.or_else(|| local.exists().then_some(local))
}

struct Daemon {
    child: Child,
    port: u16,
    _dir: tempfile::TempDir,
}

impl Drop for Daemon {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start_daemon(python: &PathBuf) -> Daemon {
    let dir = tempfile::tempdir().unwrap();
    let token_file = dir.path().join("token");
    std::fs::write(&token_file, TOKEN).unwrap();
    let mut child = Command::new(python)
        .args(["-m", "service.server.daemon", "--port", "0", "--cache-dir"])
        .arg(dir.path().join("server-cache"))
        .arg("--auth-token-file")
        .arg(&token_file)
        .current_dir(repo())
        .env("PYTHONPATH", repo())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("the daemon starts");
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let port = line
        .trim()
        .strip_prefix("cutile-serve listening on 127.0.0.1:")
        .unwrap_or_else(|| panic!("unexpected first line {line:?}"))
        .parse()
        .unwrap();
    Daemon {
        child,
        port,
        _dir: dir,
    }
}

fn add_source() -> Source {
    let text = std::fs::read_to_string(repo().join("rust_examples/add.rs")).unwrap();
    Source::new("add.rs", &text, "add")
        .generic("B", 1024)
        .target("sm_90")
        .host_arch("x86_64")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_rust_client_talks_to_cutile_serve() {
    let Some(python) = python() else {
        eprintln!("no Python with the service found (set CUTILE_PYTHON): not started");
        return;
    };
    let daemon = start_daemon(&python);
    let target = format!("127.0.0.1:{}", daemon.port);
    let cache_dir = tempfile::tempdir().unwrap();

    // no token: UNAUTHENTICATED at once (not retried), with the server's reason
    let anonymous = CompileClient::new(&Connection::new(&target)).unwrap();
    match anonymous.capabilities().await {
        Err(Error::Service { code, reason, .. }) => {
            assert_eq!(code, "UNAUTHENTICATED");
            assert_eq!(reason.as_deref(), Some("UNAUTHENTICATED"));
        }
        other => panic!("expected UNAUTHENTICATED, got {other:?}"),
    }

    let mut connection = Connection::new(&target);
    connection.token = Some(TOKEN.into());
    let mut client = CompileClient::new(&connection).unwrap();
    client.cache = Some(cutile_host::artifacts::ArtifactCache::new(cache_dir.path()));
    let caps = client.capabilities().await.unwrap();
    assert!(caps.targets.contains(&"sm_90".to_string()), "{caps:?}");

    // a kernel that does not compile: the service's diagnostics, rendered
    let broken = Source::new(
        "broken.rs",
        "#[cutile::module]\nmod kernel {\n    use cutile::core::*;\n    #[cutile::entry()]\n    fn k(x: &Tensor<f32, {[-1]}>) { let y = undefined_name; }\n}\n",
        "k",
    );
    match client.compile(&broken).await {
        Err(Error::Compile { entry, diagnostics }) => {
            assert_eq!(entry, "k");
            let first = &diagnostics[0];
            assert_eq!(first.severity, "error");
            assert!(!first.code.is_empty(), "{first:?}");
            assert!(
                first
                    .location
                    .as_deref()
                    .unwrap()
                    .starts_with("broken.rs:5:"),
                "{first:?}"
            );
            assert!(
                first.rendered.contains("broken.rs:5:"),
                "{}",
                first.rendered
            );
        }
        other => panic!("expected a compile error, got {other:?}"),
    }

    // a real compile: verified, cached under both keys
    let artifact = client.compile(&add_source()).await.unwrap();
    assert!(artifact.cubin.starts_with(b"\x7fELF"));
    let contract = artifact.contract.clone().unwrap();
    assert_eq!(contract.kernel.as_ref().unwrap().function, "add");
    let key = cutile_host::client::request_key(&add_source().request());
    assert!(client.cache.as_ref().unwrap().contains(&key));
    let server_key = artifact.request_key.clone().unwrap().sha256;

    // FindMissing and GetArtifact by the server's key
    let unknown = "0".repeat(64);
    let missing = client
        .missing_on_server(&[server_key.clone(), unknown.clone()])
        .await
        .unwrap();
    assert_eq!(missing, vec![unknown.clone()]);
    let mut fresh = client.clone();
    fresh.cache = None;
    let fetched = fresh.fetch_artifact(&server_key).await.unwrap();
    assert_eq!(fetched.cubin, artifact.cubin);
    match fresh.fetch_artifact(&unknown).await {
        Err(Error::Service { code, .. }) => assert_eq!(code, "NOT_FOUND"),
        other => panic!("expected NOT_FOUND, got {other:?}"),
    }

    // the daemon gone: the compile is answered from the local cache
    drop(daemon);
    let again = client.compile(&add_source()).await.unwrap();
    assert_eq!(again.cubin, artifact.cubin);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_served_kernel_asks_once_per_measured_facts() {
    let Some(python) = python() else {
        eprintln!("no Python with the service found (set CUTILE_PYTHON): not started");
        return;
    };
    let daemon = start_daemon(&python);
    let mut connection = Connection::new(&format!("127.0.0.1:{}", daemon.port));
    connection.token = Some(TOKEN.into());
    let cache_dir = tempfile::tempdir().unwrap();
    let mut client = CompileClient::new(&connection).unwrap();
    client.cache = Some(cutile_host::artifacts::ArtifactCache::new(cache_dir.path()));
    let served = client.served(add_source(), false).await.unwrap();
    assert!(
        served.specializations().is_empty(),
        "nothing asked before a launch"
    );

    let layouts = |n: i64| {
        let at = |i: u64| TensorLayout::contiguous(i << 40, &[n], DType::F32, 0);
        (at(1), at(2), at(3))
    };
    let kernel_for = |n: i64| {
        let served = &served;
        async move {
            let (z, x, y) = layouts(n);
            let args = [
                PlanArg::Partition {
                    layout: &z,
                    tile: &[1024],
                },
                PlanArg::Tensor(&x),
                PlanArg::Tensor(&y),
            ];
            served.kernel_for_layouts(&args, None).await
        }
    };
    // odd extents say nothing beyond the defaults: the general kernel, no request
    let odd = kernel_for(1001).await;
    assert!(std::sync::Arc::ptr_eq(&odd, served.general()));
    assert!(served.specializations().is_empty());
    // extents divisible by 16: the specialization, which assumes it, asked for once
    let wide = kernel_for(1 << 19).await; // 512 tile blocks: no occupancy variant
    assert!(!std::sync::Arc::ptr_eq(&wide, served.general()));
    let dim_div = wide
        .spec()
        .assumptions
        .iter()
        .filter(|a| a.kind.name() == "DIM_DIV" && a.value == 16)
        .count();
    assert!(dim_div >= 1, "{:?}", wide.spec().assumptions);
    let again = kernel_for(4096).await; // the same facts (16 | 4096)
    assert!(std::sync::Arc::ptr_eq(&again, &wide));
    assert_eq!(served.specializations().len(), 1);
    assert_eq!(wide.spec().min_tile_blocks, 0);
    // 1024 tile blocks of an entry that takes it: the occupancy variant with those facts
    assert!(served.general().spec().takes_occupancy_variant);
    let many = kernel_for(1 << 20).await;
    assert_eq!(many.spec().min_tile_blocks, 1024);
    assert_eq!(served.specializations().len(), 2);
    // the last layouts are remembered, and only they: other layouts are decided afresh
    assert!(std::sync::Arc::ptr_eq(&kernel_for(1 << 20).await, &many));
    assert!(std::sync::Arc::ptr_eq(
        &kernel_for(1001).await,
        served.general()
    ));
    assert!(std::sync::Arc::ptr_eq(&kernel_for(1 << 20).await, &many));
    assert!(std::sync::Arc::ptr_eq(&kernel_for(4096).await, &wide));
    assert_eq!(served.specializations().len(), 2);
    assert!(served.errors.lock().unwrap().is_empty());
}
