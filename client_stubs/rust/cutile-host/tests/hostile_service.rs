//! The Rust client against a hostile CompileService: an in-process HTTP/2 server (h2) that
//! answers gRPC calls with whatever a test scripts, so no Python is needed. A reply for
//! another kernel, a reply keyed as another request, an artifact of another key, a server
//! that stalls after its headers and a batch with more results than items must all fail
//! (or be a miss), never be cached over a good entry, and never hang.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use cutile_host::artifacts::integrity::seal;
use cutile_host::artifacts::ArtifactCache;
use cutile_host::client::service::server_slot;
use cutile_host::client::{request_key, CompileClient, Connection, RetryPolicy, Source};
use cutile_host::proto::{
    Artifact, ArtifactChunk, BatchItem, CompileBatchRequest, CompileBatchResult, CompileRequest,
    CompileResponse, Digest, GenericBinding, GetArtifactRequest, KernelIdentity, LaunchContract,
    SourceFile, Specialization, Target,
};
use cutile_host::Error;
use prost::Message;
use tokio::net::TcpListener;

/// What the server answers one call with: messages, then OK trailers (or a stall).
struct Reply {
    messages: Vec<Vec<u8>>,
    stall: bool,
}

impl Reply {
    fn one(message: impl Message) -> Self {
        Reply::many(vec![message])
    }

    fn many<M: Message>(messages: Vec<M>) -> Self {
        Reply {
            messages: messages.iter().map(|m| m.encode_to_vec()).collect(),
            stall: false,
        }
    }
}

/// Makes the artifact of a scripted reply.
type MakeArtifact = Box<dyn Fn() -> Artifact + Send + Sync>;

type Handler = Arc<dyn Fn(&str, &[u8]) -> Reply + Send + Sync>;

fn frame(message: &[u8]) -> Bytes {
    let mut out = vec![0u8];
    out.extend_from_slice(&(message.len() as u32).to_be_bytes());
    out.extend_from_slice(message);
    Bytes::from(out)
}

/// A gRPC server on a free port: `handler(method, request message)` scripts each answer.
async fn serve(handler: impl Fn(&str, &[u8]) -> Reply + Send + Sync + 'static) -> u16 {
    let handler: Handler = Arc::new(handler);
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        while let Ok((socket, _)) = listener.accept().await {
            let handler = handler.clone();
            tokio::spawn(async move {
                let Ok(mut conn) = h2::server::handshake(socket).await else {
                    return;
                };
                while let Some(Ok((request, mut respond))) = conn.accept().await {
                    let handler = handler.clone();
                    tokio::spawn(async move {
                        let method = request.uri().path().rsplit('/').next().unwrap_or("");
                        let method = method.to_string();
                        let mut body = request.into_body();
                        let mut bytes = Vec::new();
                        while let Some(Ok(chunk)) = body.data().await {
                            let _ = body.flow_control().release_capacity(chunk.len());
                            bytes.extend_from_slice(&chunk);
                        }
                        let reply = handler(&method, bytes.get(5..).unwrap_or(&[]));
                        let response = http::Response::builder()
                            .status(200)
                            .header("content-type", "application/grpc")
                            .body(())
                            .unwrap();
                        let Ok(mut send) = respond.send_response(response, false) else {
                            return;
                        };
                        for message in &reply.messages {
                            send.reserve_capacity(message.len() + 5);
                            if send.send_data(frame(message), false).is_err() {
                                return;
                            }
                        }
                        if reply.stall {
                            tokio::time::sleep(Duration::from_secs(3600)).await;
                        }
                        let mut trailers = http::HeaderMap::new();
                        trailers.insert("grpc-status", "0".parse().unwrap());
                        let _ = send.send_trailers(trailers);
                    });
                }
            });
        }
    });
    port
}

fn client(port: u16, cache: &std::path::Path) -> CompileClient {
    let mut c = CompileClient::new(&Connection::new(&format!("127.0.0.1:{port}"))).unwrap();
    c.cache = Some(ArtifactCache::new(cache));
    c.timeout = Duration::from_secs(2);
    c.retry = RetryPolicy {
        max_attempts: 2,
        ..RetryPolicy::default()
    };
    c
}

fn source(entry: &str, block: u32) -> Source {
    Source::new("k.rs", "fn x(){}", entry)
        .generic("B", block)
        .target("sm_90")
        .host_arch("x86_64")
}

/// A sealed artifact whose contract names `function<B=block>` on sm_90/x86_64.
fn artifact(function: &str, block: &str, request_key: &str, cubin: Vec<u8>) -> Artifact {
    let contract = LaunchContract {
        schema_version: 1,
        kernel: Some(KernelIdentity {
            module: "kernel".into(),
            function: function.into(),
            ..Default::default()
        }),
        target: Some(Target {
            sm: "sm_90".into(),
            host_arch: "x86_64".into(),
            ..Default::default()
        }),
        specialization: Some(Specialization {
            generics: vec![GenericBinding {
                name: "B".into(),
                value: block.into(),
            }],
        }),
        ..Default::default()
    };
    let mut a = Artifact {
        cubin,
        contract: Some(contract),
        request_key: Some(Digest {
            sha256: request_key.into(),
            size: 0,
        }),
        ..Default::default()
    };
    seal(&mut a, None);
    a
}

fn ok(artifact: Artifact) -> CompileResponse {
    CompileResponse {
        ok: true,
        artifact: Some(artifact),
        ..Default::default()
    }
}

fn function(a: &Artifact) -> String {
    a.contract
        .as_ref()
        .unwrap()
        .kernel
        .as_ref()
        .unwrap()
        .function
        .clone()
}

fn integrity(outcome: Result<Artifact, Error>) -> String {
    match outcome {
        Err(Error::Integrity(message)) => message,
        other => panic!("expected an integrity error, got {other:?}"),
    }
}

/// Compile `saxpy<B=64>` on sm_90: the server answers `add<B=128>` (and other mismatches);
/// every one is an integrity error and nothing is cached.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reply_for_another_kernel_is_refused() {
    let cases: Vec<(&str, MakeArtifact)> = vec![
        (
            "function",
            Box::new(|| artifact("add", "64", &"ab".repeat(32), b"cubin".to_vec())),
        ),
        (
            "generics",
            Box::new(|| artifact("saxpy", "128", &"ab".repeat(32), b"cubin".to_vec())),
        ),
        (
            "sm",
            Box::new(|| {
                let mut a = artifact("saxpy", "64", &"ab".repeat(32), b"cubin".to_vec());
                a.contract.as_mut().unwrap().target.as_mut().unwrap().sm = "sm_80".into();
                seal(&mut a, None);
                a
            }),
        ),
        (
            "host_arch",
            Box::new(|| {
                let mut a = artifact("saxpy", "64", &"ab".repeat(32), b"cubin".to_vec());
                let target = a.contract.as_mut().unwrap().target.as_mut().unwrap();
                target.host_arch = "aarch64".into();
                seal(&mut a, None);
                a
            }),
        ),
    ];
    for (what, make) in cases {
        let port = serve(move |_, _| Reply::one(ok(make()))).await;
        let dir = tempfile::tempdir().unwrap();
        let c = client(port, dir.path());
        let message = integrity(c.compile(&source("saxpy", 64)).await);
        assert!(message.contains(what), "{what}: {message}");
        let key = request_key(&source("saxpy", 64).request());
        assert!(
            !ArtifactCache::new(dir.path()).contains(&key),
            "{what}: cached"
        );
    }
    // the module, when the entry names one
    let port =
        serve(|_, _| Reply::one(ok(artifact("saxpy", "64", &"ab".repeat(32), b"c".to_vec()))))
            .await;
    let dir = tempfile::tempdir().unwrap();
    let c = client(port, dir.path());
    let message = integrity(c.compile(&source("other::saxpy", 64)).await);
    assert!(message.contains("module"), "{message}");
    // generic values compare as the bundle reader does: "[64, 32]" == "[64,32]"
    let port = serve(|_, _| {
        Reply::one(ok(artifact(
            "saxpy",
            "[64, 32]",
            &"ab".repeat(32),
            b"c".to_vec(),
        )))
    })
    .await;
    let c = client(port, dir.path());
    let mut wanted = source("kernel::saxpy", 0);
    wanted.generics = vec![("B".into(), "[64,32]".into())];
    assert_eq!(function(&c.compile(&wanted).await.unwrap()), "saxpy");
}

/// A cached entry for another kernel (written by a hostile peer or an older client) is
/// dropped and the request compiled again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_mismatching_cache_hit_is_a_miss() {
    let port =
        serve(|_, _| Reply::one(ok(artifact("saxpy", "64", &"ab".repeat(32), b"c".to_vec()))))
            .await;
    let dir = tempfile::tempdir().unwrap();
    let c = client(port, dir.path());
    let key = request_key(&source("saxpy", 64).request());
    let wrong = artifact("add", "128", &key, b"c".to_vec());
    ArtifactCache::new(dir.path())
        .put(&key, &wrong.encode_to_vec())
        .unwrap();
    assert_eq!(
        function(&c.compile(&source("saxpy", 64)).await.unwrap()),
        "saxpy"
    );
}

/// A reply keyed (`Artifact.request_key`) as another request must not replace that
/// request's cache entry.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reply_cannot_overwrite_another_requests_cache_entry() {
    let victim = request_key(&source("saxpy", 64).request());
    let poison_key = victim.clone();
    let port = serve(move |_, body| {
        let request = CompileRequest::decode(body).unwrap();
        let block = request.generics["B"].clone();
        let key = if request.entry == "saxpy" {
            "ab".repeat(32)
        } else {
            poison_key.clone()
        };
        Reply::one(ok(artifact(&request.entry, &block, &key, b"c".to_vec())))
    })
    .await;
    let dir = tempfile::tempdir().unwrap();
    let c = client(port, dir.path());
    assert_eq!(
        function(&c.compile(&source("saxpy", 64)).await.unwrap()),
        "saxpy"
    );
    assert_eq!(
        function(&c.compile(&source("other", 64)).await.unwrap()),
        "other"
    );
    let cache = ArtifactCache::new(dir.path());
    let entry = Artifact::decode(cache.get(&victim).unwrap().unwrap().as_slice()).unwrap();
    assert_eq!(function(&entry), "saxpy");
    // the server key lives in a namespace of its own
    assert!(cache.contains(&server_slot(&victim)));
    // with the server gone, the victim is still a correct cache hit
    let mut gone = client(1, dir.path());
    gone.retry.max_attempts = 1;
    assert_eq!(
        function(&gone.compile(&source("saxpy", 64)).await.unwrap()),
        "saxpy"
    );
}

/// GetArtifact for key K answered with a (valid, signed) artifact of another key.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fetched_artifact_must_be_the_key_asked_for() {
    let port = serve(|_, body| {
        let asked = GetArtifactRequest::decode(body)
            .unwrap()
            .key
            .unwrap()
            .sha256;
        let mut a = artifact("add", "128", &"22".repeat(32), b"\x7fELF cubin".to_vec());
        if asked == "33".repeat(32) {
            a = artifact("add", "128", &asked, b"\x7fELF cubin".to_vec());
        }
        seal(&mut a, Some(b"shared-daemon-key"));
        let mut head = a.clone();
        let data = std::mem::take(&mut head.cubin);
        Reply::many(vec![
            ArtifactChunk {
                artifact: Some(head),
                offset: 0,
                data: Vec::new(),
            },
            ArtifactChunk {
                artifact: None,
                offset: 0,
                data,
            },
        ])
    })
    .await;
    let dir = tempfile::tempdir().unwrap();
    let mut c = client(port, dir.path());
    c.signing_key = Some(b"shared-daemon-key".to_vec());
    let message = integrity(c.fetch_artifact(&"11".repeat(32)).await);
    assert!(message.contains("22"), "{message}");
    // the right key is accepted, and cached for the next fetch in the server namespace
    let right = c.fetch_artifact(&"33".repeat(32)).await.unwrap();
    assert_eq!(right.request_key.unwrap().sha256, "33".repeat(32));
    assert!(ArtifactCache::new(dir.path()).contains(&server_slot(&"33".repeat(32))));
    assert!(!ArtifactCache::new(dir.path()).contains(&"33".repeat(32)));
}

fn deadline(outcome: Result<Artifact, Error>) {
    match outcome {
        Err(Error::Service { code, .. }) => assert_eq!(code, "DEADLINE_EXCEEDED"),
        other => panic!("expected DEADLINE_EXCEEDED, got {other:?}"),
    }
}

/// The server sends its headers (or one head chunk of a stream), then nothing: the client's
/// timeout bounds the whole answer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_stalling_after_its_headers_hits_the_deadline() {
    let port = serve(|method, _| {
        let mut reply = if method == "GetArtifact" {
            let mut head = artifact("add", "128", &"11".repeat(32), b"\x7fELF".to_vec());
            head.cubin.clear();
            Reply::one(ArtifactChunk {
                artifact: Some(head),
                offset: 0,
                data: Vec::new(),
            })
        } else {
            Reply {
                messages: Vec::new(),
                stall: false,
            }
        };
        reply.stall = true;
        reply
    })
    .await;
    let dir = tempfile::tempdir().unwrap();
    let c = client(port, dir.path());
    let start = Instant::now();
    let bound = Duration::from_secs(20);
    deadline(
        tokio::time::timeout(bound, c.compile(&source("saxpy", 64)))
            .await
            .expect("hang"),
    );
    deadline(
        tokio::time::timeout(bound, c.fetch_artifact(&"11".repeat(32)))
            .await
            .expect("hang"),
    );
    let batch = one_item_batch(BTreeMap::new());
    let outcome = tokio::time::timeout(bound, c.compile_batch(&batch))
        .await
        .expect("hang");
    assert!(
        matches!(&outcome, Err(Error::Service { code, .. }) if code == "DEADLINE_EXCEEDED"),
        "{outcome:?}"
    );
    assert!(
        start.elapsed() < Duration::from_secs(15),
        "{:?}",
        start.elapsed()
    );
}

/// A batch of one `add` item with `generics`.
fn one_item_batch(generics: BTreeMap<String, String>) -> CompileBatchRequest {
    CompileBatchRequest {
        sources: vec![SourceFile {
            name: "k.rs".into(),
            text: "fn x(){}".into(),
        }],
        items: vec![BatchItem {
            entry: "add".into(),
            generics,
            ..Default::default()
        }],
        options: None,
    }
}

fn batch_result(index: u32) -> CompileBatchResult {
    CompileBatchResult {
        index,
        status: Some(Default::default()),
        response: Some(ok(artifact(
            "add",
            "64",
            &"ab".repeat(32),
            vec![7u8; 64 << 10],
        ))),
    }
}

/// One item asked: more results than items, a second result for one item, or a result for
/// an item out of range is a protocol (integrity) error, not buffered without bound.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_batch_answer_beyond_its_items_is_refused() {
    let batch = one_item_batch(BTreeMap::from([("B".to_string(), "64".to_string())]));
    let dir = tempfile::tempdir().unwrap();
    for (what, results) in [
        ("second result", vec![batch_result(0); 500]),
        ("item 1 of 1", vec![batch_result(1)]),
    ] {
        let port = serve(move |_, _| Reply::many(results.clone())).await;
        let c = client(port, dir.path());
        let outcome = tokio::time::timeout(Duration::from_secs(20), c.compile_batch(&batch))
            .await
            .expect("hang");
        match outcome {
            Err(Error::Integrity(message)) => assert!(message.contains(what), "{message}"),
            other => panic!(
                "{what}: expected an integrity error, got {:?}",
                other.map(|r| r.len())
            ),
        }
    }
    // one result per item is accepted; one for another kernel is that item's error
    let port = serve(|_, _| Reply::many(vec![batch_result(0)])).await;
    let c = client(port, dir.path());
    let results = c.compile_batch(&batch).await.unwrap();
    assert_eq!(function(results[0].as_ref().unwrap()), "add");
    let mut other = batch.clone();
    other.items[0].entry = "saxpy".into();
    assert!(matches!(
        c.compile_batch(&other).await.unwrap()[0],
        Err(Error::Integrity(_))
    ));
}

/// The server keys' slot is the Python host's too (`client_stubs.client_core.server_slot`):
/// one cache folder serves both hosts.
#[test]
fn the_server_slot_is_the_python_hosts() {
    assert_eq!(
        server_slot(&"ab".repeat(32)),
        "a2d5a8aef229a518d76fc1ad677936bb9acab3c985e5e4f2606e9543d46b7cde"
    );
}
