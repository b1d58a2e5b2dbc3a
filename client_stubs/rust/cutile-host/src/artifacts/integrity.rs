//! What a host checks before it trusts an artifact: the cubin's digest, the contract's digest
//! and, given the daemon's signing key, the HMAC-SHA256 signature over both and the request
//! key (`client_stubs/integrity.py`; the service computes them with that module).
//!
//! The contract decides what every launch checks, so both digests are required. The
//! contract's digest is over its deterministic serialization (fields in number order, no
//! maps), which prost writes byte for byte as Python's protobuf does (the shared launch
//! vectors check it for every contract they hold).

use hmac::{Hmac, Mac};
use prost::Message;
use sha2::{Digest as _, Sha256};

use crate::errors::{Error, Result};
use crate::proto::{Artifact, Digest, LaunchContract};

pub const SIGNATURE_DOMAIN: &[u8] = b"cutile-serve-artifact-v1";
/// The largest cubin a host accepts (the service's tileiras output cap).
pub const MAX_CUBIN_BYTES: usize = 64 << 20;

/// Lowercase hex sha256 of `data`.
pub fn sha256_hex(data: &[u8]) -> String {
    hex::encode(Sha256::digest(data))
}

/// The contract's deterministic serialization.
pub fn contract_bytes(contract: &LaunchContract) -> Vec<u8> {
    contract.encode_to_vec()
}

pub fn digest_of(data: &[u8]) -> Digest {
    Digest {
        sha256: sha256_hex(data),
        size: data.len() as i64,
    }
}

fn digest_text(d: &Option<Digest>) -> &str {
    d.as_ref().map_or("", |d| d.sha256.as_str())
}

/// The HMAC over the domain, both digests and the request key, joined by NUL bytes.
fn mac_for(key: &[u8], artifact: &Artifact) -> Hmac<Sha256> {
    let mut mac = Hmac::<Sha256>::new_from_slice(key).expect("HMAC takes any key length");
    mac.update(SIGNATURE_DOMAIN);
    for part in [
        &artifact.cubin_digest,
        &artifact.contract_digest,
        &artifact.request_key,
    ] {
        mac.update(b"\0");
        mac.update(digest_text(part).as_bytes());
    }
    mac
}

/// HMAC-SHA256 over the domain, both digests and the request key.
pub fn signature(key: &[u8], artifact: &Artifact) -> Vec<u8> {
    mac_for(key, artifact).finalize().into_bytes().to_vec()
}

/// Fill in the artifact's digests (and signature, given the key).
pub fn seal(artifact: &mut Artifact, key: Option<&[u8]>) {
    artifact.cubin_digest = Some(digest_of(&artifact.cubin));
    let contract = artifact.contract.clone().unwrap_or_default();
    artifact.contract_digest = Some(digest_of(&contract_bytes(&contract)));
    if let Some(key) = key {
        artifact.signature = signature(key, artifact);
    }
}

/// `Error::Integrity` unless both digests are present and match (and, given `key`, the
/// signature is the one a daemon with that key makes). `what` names the artifact.
pub fn verify(artifact: &Artifact, what: &str, key: Option<&[u8]>) -> Result<()> {
    let (cubin, contract) = (
        digest_text(&artifact.cubin_digest),
        digest_text(&artifact.contract_digest),
    );
    if cubin.is_empty() || contract.is_empty() {
        let missing = if cubin.is_empty() {
            "cubin"
        } else {
            "contract"
        };
        return Err(Error::Integrity(format!(
            "{what}: the artifact carries no {missing} digest; refusing it"
        )));
    }
    if artifact.cubin.len() > MAX_CUBIN_BYTES {
        return Err(Error::Integrity(format!(
            "{what}: a {}-byte cubin is over the cap",
            artifact.cubin.len()
        )));
    }
    check(
        what,
        "cubin",
        artifact.cubin_digest.as_ref().unwrap(),
        &artifact.cubin,
    )?;
    let contract_data = contract_bytes(&artifact.contract.clone().unwrap_or_default());
    check(
        what,
        "contract",
        artifact.contract_digest.as_ref().unwrap(),
        &contract_data,
    )?;
    if let Some(key) = key {
        // constant-time comparison
        if mac_for(key, artifact)
            .verify_slice(&artifact.signature)
            .is_err()
        {
            let state = if artifact.signature.is_empty() {
                "no"
            } else {
                "an invalid"
            };
            return Err(Error::Integrity(format!(
                "{what}: {state} signature for this host's signing key"
            )));
        }
    }
    Ok(())
}

fn check(what: &str, part: &str, expected: &Digest, data: &[u8]) -> Result<()> {
    let actual = sha256_hex(data);
    let size_differs = expected.size != 0 && expected.size != data.len() as i64;
    if actual != expected.sha256.to_lowercase() || size_differs {
        return Err(Error::Integrity(format!(
            "{what}: {part} sha256 {actual} ({} bytes) differs from the digest {} ({} bytes) it came with",
            data.len(),
            expected.sha256,
            expected.size
        )));
    }
    Ok(())
}
