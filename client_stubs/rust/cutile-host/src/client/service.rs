//! `CompileClient`: compile through cutile-serve (tonic), with the local artifact cache the
//! Python client shares (`client_stubs/client.py`).
//!
//! A request whose key is in the local cache skips the network. Nothing is trusted unchecked:
//! every artifact, from the service or the cache, must carry matching cubin and contract
//! digests (and, given the daemon's signing key, its signature); a streamed download stops at
//! the announced size, and a reply (or cache hit) must be for the kernel asked for: its
//! contract names the requested function (and module), target, host architecture and
//! generics. Artifacts are also cached under the server's key (`Artifact.request_key`), in a
//! namespace of their own ([`server_slot`]: a reply cannot overwrite another request's
//! entry), so [`CompileClient::prefetch`] fetches only what a host lacks (`FindMissing`, then
//! chunked `GetArtifact`). Every attempt, a streamed answer included, ends within
//! `CompileClient::timeout` (else DEADLINE_EXCEEDED). UNAVAILABLE and RESOURCE_EXHAUSTED are retried
//! with backoff honouring the server's RetryInfo; a kernel that does not compile is an
//! [`Error::Compile`] carrying the service's rendered diagnostics (file:line:col, code,
//! message).

use std::collections::BTreeMap;
use std::future::Future;
use std::time::Duration;

use prost::Message;
use sha2::{Digest as _, Sha256};
use tonic::metadata::MetadataValue;
use tonic::transport::{Certificate, Channel, ClientTlsConfig, Endpoint};
use tonic::{Request, Status};

use crate::artifacts::bundle::normalize_generic;
use crate::artifacts::cache::{is_key, ArtifactCache};
use crate::artifacts::integrity::{verify, MAX_CUBIN_BYTES};
use crate::client::request::{request_key, Source};
use crate::client::retry::{service_error, with_retries, RetryPolicy};
use crate::errors::{Diagnostic, Error, Result};
use crate::proto::compile_service_client::CompileServiceClient;
use crate::proto::{
    Artifact, BatchItem, Capabilities, CompileBatchRequest, CompileBatchResult, CompileOptions,
    CompileRequest, CompileResponse, Digest, FindMissingRequest, GetArtifactRequest,
    GetCapabilitiesRequest,
};

pub const DEFAULT_TARGET: &str = "http://127.0.0.1:50051";
/// Keys per FindMissing call (the server's default limit is 4096).
pub const FIND_MISSING_BATCH: usize = 1024;
const MAX_MESSAGE_BYTES: usize = 256 << 20;

/// The cache key an artifact the server keys `server_key` is kept under locally: a namespace
/// apart from the client's own request keys, so no reply can replace another request's entry.
pub fn server_slot(server_key: &str) -> String {
    hex::encode(Sha256::digest(format!("server:{server_key}").as_bytes()))
}

/// `call` bounded by `timeout` as a whole (a streamed answer drained included): a server that
/// sends its headers and then stalls ends in DEADLINE_EXCEEDED.
async fn bounded<T>(
    timeout: Duration,
    call: impl Future<Output = std::result::Result<T, Status>>,
) -> std::result::Result<T, Status> {
    tokio::time::timeout(timeout, call)
        .await
        .unwrap_or_else(|_| {
            Err(Status::deadline_exceeded(format!(
                "no complete answer within {timeout:?}"
            )))
        })
}

/// What a reply must be for: the kernel, target and generics a request names.
#[derive(Clone, Debug, Default)]
struct Wanted {
    entry: String,
    function: String,
    module: Option<String>,
    sm: Option<String>,
    host_arch: Option<String>,
    generics: BTreeMap<String, String>,
    generic_args: Vec<String>,
}

impl Wanted {
    fn new(
        entry: &str,
        generics: &BTreeMap<String, String>,
        generic_args: &[String],
        target: &str,
        options: Option<&CompileOptions>,
    ) -> Self {
        let (module, function) = match entry.rsplit_once("::") {
            Some((module, function)) => (Some(module.to_string()), function.to_string()),
            None => (None, entry.to_string()),
        };
        let some = |text: &str| (!text.is_empty()).then(|| text.to_string());
        Wanted {
            entry: entry.to_string(),
            function,
            module: module.filter(|m| !m.is_empty()),
            sm: some(target),
            host_arch: options.and_then(|o| some(&o.host_arch)),
            generics: generics
                .iter()
                .map(|(k, v)| (k.clone(), normalize_generic(v)))
                .collect(),
            generic_args: generic_args.iter().map(|v| normalize_generic(v)).collect(),
        }
    }

    fn of_request(request: &CompileRequest) -> Self {
        Wanted::new(
            &request.entry,
            &request.generics,
            &request.generic_args,
            &request.target,
            request.options.as_ref(),
        )
    }

    fn of_item(item: &BatchItem, batch: &CompileBatchRequest) -> Self {
        Wanted::new(
            &item.entry,
            &item.generics,
            &item.generic_args,
            &item.target,
            item.options.as_ref().or(batch.options.as_ref()),
        )
    }

    /// Why `artifact`'s contract is not for this request, if it is not.
    fn mismatch(&self, artifact: &Artifact) -> Option<String> {
        let contract = artifact.contract.clone().unwrap_or_default();
        let kernel = contract.kernel.unwrap_or_default();
        let target = contract.target.unwrap_or_default();
        let mut problems = Vec::new();
        if kernel.function != self.function {
            problems.push(format!(
                "function {:?} != {:?}",
                kernel.function, self.function
            ));
        }
        if let Some(module) = &self.module {
            if &kernel.module != module {
                problems.push(format!("module {:?} != {module:?}", kernel.module));
            }
        }
        if let Some(sm) = &self.sm {
            if &target.sm != sm {
                problems.push(format!("sm {:?} != {sm:?}", target.sm));
            }
        }
        if let Some(arch) = &self.host_arch {
            if &target.host_arch != arch {
                problems.push(format!("host_arch {:?} != {arch:?}", target.host_arch));
            }
        }
        let bound: Vec<(String, String)> = contract
            .specialization
            .map(|s| {
                s.generics
                    .into_iter()
                    .map(|g| (g.name, normalize_generic(&g.value)))
                    .collect()
            })
            .unwrap_or_default();
        let bound_map: BTreeMap<String, String> = bound.iter().cloned().collect();
        let agree = if self.generic_args.is_empty() {
            bound_map == self.generics
        } else if self.generics.is_empty() {
            bound.iter().map(|(_, v)| v).eq(self.generic_args.iter())
        } else {
            bound.len() == self.generics.len() + self.generic_args.len()
                && self
                    .generics
                    .iter()
                    .all(|(k, v)| bound_map.get(k) == Some(v))
        };
        if !agree {
            problems.push(format!(
                "generics {bound_map:?} != {:?}{}",
                self.generics,
                if self.generic_args.is_empty() {
                    String::new()
                } else {
                    format!(" / {:?}", self.generic_args)
                }
            ));
        }
        (!problems.is_empty()).then(|| problems.join("; "))
    }

    /// An integrity error unless `artifact` is for this request.
    fn check(&self, artifact: &Artifact, what: &str) -> Result<()> {
        match self.mismatch(artifact) {
            None => Ok(()),
            Some(problems) => Err(Error::Integrity(format!(
                "{what}: the artifact is not for `{}` as asked: {problems}",
                self.entry
            ))),
        }
    }
}

/// How to reach the service.
#[derive(Clone, Debug, Default)]
pub struct Connection {
    /// `host:port` or a URI (`http://`, `https://`).
    pub target: String,
    /// Sent as `authorization: Bearer <token>` (the daemon's `--auth-token-file`).
    pub token: Option<String>,
    /// PEM of the CA to trust: connect over TLS (with `https://` targets the system roots are
    /// trusted when this is None).
    pub tls_ca_pem: Option<Vec<u8>>,
    /// The TLS server name when it differs from the target's host.
    pub tls_domain: Option<String>,
}

impl Connection {
    pub fn new(target: &str) -> Self {
        Connection {
            target: target.to_string(),
            ..Default::default()
        }
    }
}

/// A client of `cutile.compile.v1.CompileService` with a local artifact cache.
#[derive(Clone)]
pub struct CompileClient {
    rpc: CompileServiceClient<Channel>,
    target: String,
    token: Option<MetadataValue<tonic::metadata::Ascii>>,
    pub cache: Option<ArtifactCache>,
    pub retry: RetryPolicy,
    pub timeout: Duration,
    pub signing_key: Option<Vec<u8>>,
}

/// The service's rendered text of a diagnostic, or a one-line fallback.
pub fn render_diagnostic(d: &crate::proto::Diagnostic) -> Diagnostic {
    let severity = match d.severity {
        2 => "warning",
        3 => "note",
        4 => "help",
        _ => "error",
    };
    let location = d
        .spans
        .iter()
        .find(|s| s.primary)
        .or(d.spans.first())
        .map(|s| format!("{}:{}:{}", s.source_name, s.line_start, s.col_start));
    let rendered = if d.rendered.is_empty() {
        let code = if d.code.is_empty() {
            String::new()
        } else {
            format!("[{}]", d.code)
        };
        let at = location
            .as_ref()
            .map_or(String::new(), |l| format!(" at {l}"));
        format!("{severity}{code}: {}{at}", d.message)
    } else {
        d.rendered.clone()
    };
    Diagnostic {
        severity: severity.to_string(),
        code: d.code.clone(),
        message: d.message.clone(),
        location,
        rendered,
    }
}

impl CompileClient {
    /// A client of the service at `connection.target` (connects on first use).
    pub fn new(connection: &Connection) -> Result<Self> {
        let uri = if connection.target.contains("://") {
            connection.target.clone()
        } else if connection.tls_ca_pem.is_some() {
            format!("https://{}", connection.target)
        } else {
            format!("http://{}", connection.target)
        };
        let usage = |e: tonic::transport::Error| Error::Usage(format!("target {uri}: {e}"));
        let mut endpoint = Endpoint::from_shared(uri.clone()).map_err(usage)?;
        if connection.tls_ca_pem.is_some() || uri.starts_with("https://") {
            let mut tls = ClientTlsConfig::new();
            tls = match &connection.tls_ca_pem {
                Some(pem) => tls.ca_certificate(Certificate::from_pem(pem)),
                None => tls.with_native_roots(),
            };
            if let Some(domain) = &connection.tls_domain {
                tls = tls.domain_name(domain.clone());
            }
            endpoint = endpoint.tls_config(tls).map_err(usage)?;
        }
        let channel = endpoint.connect_lazy();
        let token = connection
            .token
            .as_ref()
            .map(|t| {
                MetadataValue::try_from(format!("Bearer {t}"))
                    .map_err(|_| Error::Usage("the bearer token is not valid header text".into()))
            })
            .transpose()?;
        Ok(CompileClient {
            rpc: CompileServiceClient::new(channel)
                .max_decoding_message_size(MAX_MESSAGE_BYTES)
                .max_encoding_message_size(MAX_MESSAGE_BYTES),
            target: connection.target.clone(),
            token,
            cache: Some(ArtifactCache::default()),
            retry: RetryPolicy::default(),
            timeout: Duration::from_secs(300),
            signing_key: None,
        })
    }

    fn request<T>(&self, message: T) -> Request<T> {
        let mut request = Request::new(message);
        request.set_timeout(self.timeout);
        if let Some(token) = &self.token {
            request
                .metadata_mut()
                .insert("authorization", token.clone());
        }
        request
    }

    /// Compile `source` (or answer from the local cache) into a verified artifact.
    pub async fn compile(&self, source: &Source) -> Result<Artifact> {
        self.compile_request(&source.request()).await
    }

    /// Send one request (or answer it from the local cache).
    pub async fn compile_request(&self, request: &CompileRequest) -> Result<Artifact> {
        let key = request_key(request);
        let wanted = Wanted::of_request(request);
        let skip = request.options.as_ref().is_some_and(|o| o.skip_cache);
        if !skip {
            if let Some(cached) = self.cached(&key, |a| wanted.mismatch(a).is_none())? {
                return Ok(cached);
            }
        }
        let what = format!("Compile on {}", self.target);
        let response: CompileResponse = with_retries(&self.retry, &what, || {
            let mut rpc = self.rpc.clone();
            let message = self.request(request.clone());
            bounded(self.timeout, async move {
                rpc.compile(message).await.map(|r| r.into_inner())
            })
        })
        .await?;
        let artifact = self.accept(&wanted, response)?;
        self.store(&key, &artifact)?;
        Ok(artifact)
    }

    /// The artifact of a reply: verified, and for the kernel `wanted` names.
    fn accept(&self, wanted: &Wanted, response: CompileResponse) -> Result<Artifact> {
        if !response.ok {
            return Err(Error::Compile {
                entry: wanted.entry.clone(),
                diagnostics: response.diagnostics.iter().map(render_diagnostic).collect(),
            });
        }
        let artifact = response.artifact.unwrap_or_default();
        let what = format!("`{}` from {}", wanted.entry, self.target);
        verify(&artifact, &what, self.signing_key.as_deref())?;
        wanted.check(&artifact, &what)?;
        Ok(artifact)
    }

    /// Cache `artifact` under the client's own `key`, and under its server key in the
    /// server namespace ([`server_slot`]) when that differs.
    fn store(&self, key: &str, artifact: &Artifact) -> Result<()> {
        let Some(cache) = &self.cache else {
            return Ok(());
        };
        let blob = artifact.encode_to_vec();
        cache.put(key, &blob)?;
        let server_key = artifact
            .request_key
            .as_ref()
            .map_or("", |d| d.sha256.as_str());
        if is_key(server_key) && server_key != key {
            cache.put(&server_slot(server_key), &blob)?;
        }
        Ok(())
    }

    /// The cached artifact under `slot` when it passes the same checks as one from the
    /// service and `fits` it; one that does not is dropped.
    fn cached(&self, slot: &str, fits: impl Fn(&Artifact) -> bool) -> Result<Option<Artifact>> {
        let Some(cache) = &self.cache else {
            return Ok(None);
        };
        let Some(blob) = cache.get(slot)? else {
            return Ok(None);
        };
        let what = format!("cached artifact {}", &slot[..12]);
        match Artifact::decode(blob.as_slice()) {
            Ok(artifact)
                if verify(&artifact, &what, self.signing_key.as_deref()).is_ok()
                    && fits(&artifact) =>
            {
                Ok(Some(artifact))
            }
            _ => {
                cache.delete(slot)?;
                Ok(None)
            }
        }
    }

    /// The cached artifact the server keys `key`: in the server namespace, else the client
    /// entry of the same key (the usual case: both keys agree); either must carry `key`.
    fn cached_server_key(&self, key: &str) -> Result<Option<Artifact>> {
        let fits = |a: &Artifact| a.request_key.as_ref().is_some_and(|d| d.sha256 == key);
        if let Some(found) = self.cached(&server_slot(key), fits)? {
            return Ok(Some(found));
        }
        let Some(cache) = &self.cache else {
            return Ok(None);
        };
        // a client entry is never dropped here: it may be valid for its own request
        let Some(blob) = cache.get(key)? else {
            return Ok(None);
        };
        let what = format!("cached artifact {}", &key[..12]);
        Ok(Artifact::decode(blob.as_slice())
            .ok()
            .filter(|a| verify(a, &what, self.signing_key.as_deref()).is_ok() && fits(a)))
    }

    /// Compile many items in one call; one result per item, in item order (each its own
    /// verified artifact or error). Cubins the server left out for size are fetched by key.
    pub async fn compile_batch(
        &self,
        batch: &CompileBatchRequest,
    ) -> Result<Vec<Result<Artifact>>> {
        let what = format!("CompileBatch on {}", self.target);
        let items = batch.items.len();
        let results: Vec<CompileBatchResult> = with_retries(&self.retry, &what, || {
            let mut rpc = self.rpc.clone();
            let message = self.request(batch.clone());
            let what = what.clone();
            bounded(self.timeout, async move {
                let mut stream = rpc.compile_batch(message).await?.into_inner();
                let mut out: Vec<CompileBatchResult> = Vec::new();
                let mut seen = vec![false; items];
                while let Some(result) = stream.message().await? {
                    let index = result.index as usize;
                    let problem = if index >= items {
                        Some(format!("a result for item {index} of {items}"))
                    } else if seen[index] {
                        Some(format!("a second result for item {index}"))
                    } else {
                        None
                    };
                    if let Some(problem) = problem {
                        return Ok(Err(Error::Integrity(format!("{what}: {problem}"))));
                    }
                    seen[index] = true;
                    out.push(result);
                }
                Ok(Ok(out))
            })
        })
        .await??;
        let mut ordered: Vec<Option<Result<Artifact>>> = (0..items).map(|_| None).collect();
        for result in results {
            let index = result.index as usize;
            let wanted = Wanted::of_item(&batch.items[index], batch);
            ordered[index] = Some(self.batch_item(&wanted, result).await);
        }
        Ok(ordered
            .into_iter()
            .enumerate()
            .map(|(i, r)| {
                r.unwrap_or_else(|| {
                    Err(Error::Service {
                        code: "INTERNAL".into(),
                        message: format!("no result for batch item {i}"),
                        reason: None,
                        violations: Vec::new(),
                    })
                })
            })
            .collect())
    }

    async fn batch_item(&self, wanted: &Wanted, result: CompileBatchResult) -> Result<Artifact> {
        let entry = wanted.entry.as_str();
        let status = result.status.unwrap_or_default();
        if let Some(response) = result.response {
            if !response.ok || status.code == 0 {
                let mut response = response;
                let sent_inline = response
                    .artifact
                    .as_ref()
                    .is_some_and(|a| !a.cubin.is_empty());
                if response.ok && !sent_inline {
                    let key = response
                        .artifact
                        .as_ref()
                        .and_then(|a| a.request_key.clone())
                        .map(|d| d.sha256)
                        .unwrap_or_default();
                    let artifact = self.fetch_artifact(&key).await?;
                    let what = format!("`{entry}` from {}", self.target);
                    wanted.check(&artifact, &what)?;
                    return Ok(artifact);
                }
                response.ok = response.ok && status.code == 0;
                return self.accept(wanted, response);
            }
        }
        let code = tonic::Code::from_i32(status.code);
        let mut rich = Status::new(code, status.message.clone());
        if !status.details.is_empty() {
            rich =
                Status::with_details(code, status.message.clone(), status.encode_to_vec().into());
        }
        Err(service_error(
            &rich,
            &format!("CompileBatch item `{entry}`"),
        ))
    }

    /// Which of `keys` the server does not hold (`FindMissing`, in batches).
    pub async fn missing_on_server(&self, keys: &[String]) -> Result<Vec<String>> {
        for key in keys {
            checked_key(key)?;
        }
        let mut missing = Vec::new();
        for chunk in keys.chunks(FIND_MISSING_BATCH) {
            let message = FindMissingRequest {
                keys: chunk
                    .iter()
                    .map(|k| Digest {
                        sha256: k.clone(),
                        size: 0,
                    })
                    .collect(),
            };
            let what = format!("FindMissing on {}", self.target);
            let response = with_retries(&self.retry, &what, || {
                let mut rpc = self.rpc.clone();
                let request = self.request(message.clone());
                bounded(self.timeout, async move {
                    rpc.find_missing(request).await.map(|r| r.into_inner())
                })
            })
            .await?;
            missing.extend(response.missing.into_iter().map(|d| d.sha256));
        }
        Ok(missing)
    }

    /// The artifact the server stores under `key`: local cache first, else `GetArtifact`
    /// (chunks in order, bounded by the announced size, digests checked, its `request_key`
    /// `key`, then cached in the server namespace, [`server_slot`]).
    pub async fn fetch_artifact(&self, key: &str) -> Result<Artifact> {
        checked_key(key)?;
        if let Some(cached) = self.cached_server_key(key)? {
            return Ok(cached);
        }
        let what = format!("GetArtifact on {}", self.target);
        let artifact = with_retries(&self.retry, &what, || {
            bounded(self.timeout, self.get_artifact(key))
        })
        .await??;
        if let Some(cache) = &self.cache {
            cache.put(&server_slot(key), &artifact.encode_to_vec())?;
        }
        Ok(artifact)
    }

    /// One streamed download; the outer error is the RPC's (retried), the inner one the
    /// integrity verdict (not retried).
    async fn get_artifact(&self, key: &str) -> std::result::Result<Result<Artifact>, Status> {
        let what = format!("artifact {}", &key[..12]);
        let request = self.request(GetArtifactRequest {
            key: Some(Digest {
                sha256: key.to_string(),
                size: 0,
            }),
            max_chunk_bytes: 0,
        });
        let mut stream = self.rpc.clone().get_artifact(request).await?.into_inner();
        let mut artifact: Option<Artifact> = None;
        let mut cubin = Vec::new();
        let mut announced = 0usize;
        while let Some(chunk) = stream.message().await? {
            if artifact.is_none() {
                let first = chunk.artifact.clone().unwrap_or_default();
                let size = first.cubin_digest.as_ref().map_or(0, |d| d.size);
                if size <= 0 || size as usize > MAX_CUBIN_BYTES {
                    return Ok(Err(Error::Integrity(format!(
                        "{what}: announced cubin size {size}"
                    ))));
                }
                announced = size as usize;
                cubin.reserve(announced);
                artifact = Some(first);
            }
            if chunk.data.is_empty() {
                continue;
            }
            if chunk.offset as usize != cubin.len() {
                return Ok(Err(Error::Integrity(format!(
                    "{what}: chunk at offset {}, expected {} (chunks out of order or missing)",
                    chunk.offset,
                    cubin.len()
                ))));
            }
            if cubin.len() + chunk.data.len() > announced {
                return Ok(Err(Error::Integrity(format!(
                    "{what}: more than the {announced} bytes announced"
                ))));
            }
            cubin.extend_from_slice(&chunk.data);
        }
        let Some(mut artifact) = artifact else {
            return Ok(Err(Error::Integrity(format!(
                "{what}: the server sent no chunks"
            ))));
        };
        artifact.cubin = cubin;
        if let Err(e) = verify(&artifact, &what, self.signing_key.as_deref()) {
            return Ok(Err(e));
        }
        let sent = artifact
            .request_key
            .as_ref()
            .map_or("", |d| d.sha256.as_str());
        if sent != key {
            return Ok(Err(Error::Integrity(format!(
                "{what}: the server sent the artifact of key {sent:?}"
            ))));
        }
        Ok(Ok(artifact))
    }

    /// Bring every artifact of `keys` into the local cache, fetching only what it lacks.
    /// Returns the keys neither has (they need a compile).
    pub async fn prefetch(&self, keys: &[String]) -> Result<Vec<String>> {
        if self.cache.is_none() {
            return Err(Error::Usage("prefetch needs a local cache".into()));
        }
        let mut local_missing: Vec<String> = Vec::new();
        for key in keys {
            checked_key(key)?;
            if !local_missing.contains(key) && self.cached_server_key(key)?.is_none() {
                local_missing.push(key.clone());
            }
        }
        if local_missing.is_empty() {
            return Ok(Vec::new());
        }
        let unknown = self.missing_on_server(&local_missing).await?;
        for key in &local_missing {
            if !unknown.contains(key) {
                self.fetch_artifact(key).await?;
            }
        }
        Ok(local_missing
            .into_iter()
            .filter(|k| unknown.contains(k))
            .collect())
    }

    /// Targets, versions and limits of the server.
    pub async fn capabilities(&self) -> Result<Capabilities> {
        let what = format!("GetCapabilities on {}", self.target);
        with_retries(&self.retry, &what, || {
            let mut rpc = self.rpc.clone();
            let request = self.request(GetCapabilitiesRequest {});
            bounded(self.timeout, async move {
                rpc.get_capabilities(request).await.map(|r| r.into_inner())
            })
        })
        .await
    }
}

fn checked_key(key: &str) -> Result<()> {
    if is_key(key) {
        Ok(())
    } else {
        Err(Error::Usage(format!(
            "an artifact key is 64 lowercase hex digits, got {key:?}"
        )))
    }
}
