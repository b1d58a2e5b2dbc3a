//! `CompileClient`: compile through cutile-serve (tonic), with the local artifact cache the
//! Python client shares (`client_stubs/client.py`).
//!
//! A request whose key is in the local cache skips the network. Nothing is trusted unchecked:
//! every artifact, from the service or the cache, must carry matching cubin and contract
//! digests (and, given the daemon's signing key, its signature); a streamed download stops at
//! the announced size. Artifacts are also cached under the server's key
//! (`Artifact.request_key`), so [`CompileClient::prefetch`] fetches only what a host lacks
//! (`FindMissing`, then chunked `GetArtifact`). UNAVAILABLE and RESOURCE_EXHAUSTED are retried
//! with backoff honouring the server's RetryInfo; a kernel that does not compile is an
//! [`Error::Compile`] carrying the service's rendered diagnostics (file:line:col, code,
//! message).

use std::time::Duration;

use prost::Message;
use tonic::metadata::MetadataValue;
use tonic::transport::{Certificate, Channel, ClientTlsConfig, Endpoint};
use tonic::{Request, Status};

use crate::artifacts::cache::{is_key, ArtifactCache};
use crate::artifacts::integrity::{verify, MAX_CUBIN_BYTES};
use crate::client::request::{request_key, Source};
use crate::client::retry::{service_error, with_retries, RetryPolicy};
use crate::errors::{Diagnostic, Error, Result};
use crate::proto::compile_service_client::CompileServiceClient;
use crate::proto::{
    Artifact, Capabilities, CompileBatchRequest, CompileBatchResult, CompileRequest,
    CompileResponse, Digest, FindMissingRequest, GetArtifactRequest, GetCapabilitiesRequest,
};

pub const DEFAULT_TARGET: &str = "http://127.0.0.1:50051";
/// Keys per FindMissing call (the server's default limit is 4096).
pub const FIND_MISSING_BATCH: usize = 1024;
const MAX_MESSAGE_BYTES: usize = 256 << 20;

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
        let skip = request.options.as_ref().is_some_and(|o| o.skip_cache);
        if !skip {
            if let Some(cached) = self.cached(&key)? {
                return Ok(cached);
            }
        }
        let what = format!("Compile on {}", self.target);
        let response: CompileResponse = with_retries(&self.retry, &what, || {
            let mut rpc = self.rpc.clone();
            let message = self.request(request.clone());
            async move { rpc.compile(message).await.map(|r| r.into_inner()) }
        })
        .await?;
        let artifact = self.accept(&request.entry, response)?;
        self.store(&key, &artifact)?;
        Ok(artifact)
    }

    fn accept(&self, entry: &str, response: CompileResponse) -> Result<Artifact> {
        if !response.ok {
            return Err(Error::Compile {
                entry: entry.to_string(),
                diagnostics: response.diagnostics.iter().map(render_diagnostic).collect(),
            });
        }
        let artifact = response.artifact.unwrap_or_default();
        let what = format!("`{entry}` from {}", self.target);
        verify(&artifact, &what, self.signing_key.as_deref())?;
        Ok(artifact)
    }

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
            cache.put(server_key, &blob)?;
        }
        Ok(())
    }

    /// The cached artifact of `key` when it passes the same checks as one from the service;
    /// one that does not is dropped.
    fn cached(&self, key: &str) -> Result<Option<Artifact>> {
        let Some(cache) = &self.cache else {
            return Ok(None);
        };
        let Some(blob) = cache.get(key)? else {
            return Ok(None);
        };
        let what = format!("cached artifact {}", &key[..12]);
        match Artifact::decode(blob.as_slice()) {
            Ok(artifact) if verify(&artifact, &what, self.signing_key.as_deref()).is_ok() => {
                Ok(Some(artifact))
            }
            _ => {
                cache.delete(key)?;
                Ok(None)
            }
        }
    }

    /// Compile many items in one call; one result per item, in item order (each its own
    /// verified artifact or error). Cubins the server left out for size are fetched by key.
    pub async fn compile_batch(
        &self,
        batch: &CompileBatchRequest,
    ) -> Result<Vec<Result<Artifact>>> {
        let what = format!("CompileBatch on {}", self.target);
        let results: Vec<CompileBatchResult> = with_retries(&self.retry, &what, || {
            let mut rpc = self.rpc.clone();
            let message = self.request(batch.clone());
            async move {
                let mut stream = rpc.compile_batch(message).await?.into_inner();
                let mut out = Vec::new();
                while let Some(result) = stream.message().await? {
                    out.push(result);
                }
                Ok(out)
            }
        })
        .await?;
        let mut ordered: Vec<Option<Result<Artifact>>> =
            (0..batch.items.len()).map(|_| None).collect();
        for result in results {
            let index = result.index as usize;
            let entry = batch
                .items
                .get(index)
                .map_or("", |i| i.entry.as_str())
                .to_string();
            let outcome = self.batch_item(&entry, result).await;
            if let Some(slot) = ordered.get_mut(index) {
                *slot = Some(outcome);
            }
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

    async fn batch_item(&self, entry: &str, result: CompileBatchResult) -> Result<Artifact> {
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
                    return self.fetch_artifact(&key).await;
                }
                response.ok = response.ok && status.code == 0;
                return self.accept(entry, response);
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
                async move { rpc.find_missing(request).await.map(|r| r.into_inner()) }
            })
            .await?;
            missing.extend(response.missing.into_iter().map(|d| d.sha256));
        }
        Ok(missing)
    }

    /// The artifact stored under `key`: local cache first, else `GetArtifact` (chunks in
    /// order, bounded by the announced size, digests checked, then cached).
    pub async fn fetch_artifact(&self, key: &str) -> Result<Artifact> {
        checked_key(key)?;
        if let Some(cached) = self.cached(key)? {
            return Ok(cached);
        }
        let what = format!("GetArtifact on {}", self.target);
        let artifact = with_retries(&self.retry, &what, || self.get_artifact(key)).await??;
        if let Some(cache) = &self.cache {
            cache.put(key, &artifact.encode_to_vec())?;
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
        Ok(verify(&artifact, &what, self.signing_key.as_deref()).map(|_| artifact))
    }

    /// Bring every artifact of `keys` into the local cache, fetching only what it lacks.
    /// Returns the keys neither has (they need a compile).
    pub async fn prefetch(&self, keys: &[String]) -> Result<Vec<String>> {
        let Some(cache) = &self.cache else {
            return Err(Error::Usage("prefetch needs a local cache".into()));
        };
        let mut local_missing: Vec<String> = Vec::new();
        for key in keys {
            checked_key(key)?;
            if !local_missing.contains(key) && !cache.contains(key) {
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
            async move { rpc.get_capabilities(request).await.map(|r| r.into_inner()) }
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
