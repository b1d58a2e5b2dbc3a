//! Compile requests and their local cache key.
//!
//! The key is the sha256 of the request's deterministic serialization with
//! `options.skip_cache` and the file names cleared (the same sources under another name
//! compile to the same artifact), byte for byte what `client_stubs.client_core.request_key`
//! hashes, so the Rust and Python hosts find each other's entries in one cache folder.
//! prost writes every field as Python's protobuf does except map entries: Python writes an
//! entry's key and value even when empty (prost leaves empty ones out), and orders keys of
//! which one is a prefix of the other longest first (see `upb_key_order`). The `generics`
//! map is therefore written here, between the fields before and after it
//! (tests/vectors/host holds keys Python computed).

use std::collections::BTreeMap;

use prost::encoding::{encode_key, encode_varint, WireType};
use prost::Message;
use sha2::{Digest as _, Sha256};

use crate::proto::{CompileOptions, CompileRequest, SourceFile, TensorFacts};

/// The local cache key of `request` (lowercase hex).
pub fn request_key(request: &CompileRequest) -> String {
    let mut keyed = request.clone();
    let mut options = keyed.options.take().unwrap_or_default();
    options.skip_cache = false;
    keyed.options = Some(options);
    for source in &mut keyed.sources {
        source.name.clear();
    }
    hex::encode(Sha256::digest(deterministic_bytes(&keyed)))
}

/// The request's deterministic serialization, map entries written in full.
pub fn deterministic_bytes(request: &CompileRequest) -> Vec<u8> {
    let before = CompileRequest {
        sources: request.sources.clone(),
        entry: request.entry.clone(),
        ..Default::default()
    };
    let after = CompileRequest {
        generic_args: request.generic_args.clone(),
        target: request.target.clone(),
        options: request.options.clone(),
        specialization: request.specialization.clone(),
        ..Default::default()
    };
    let mut out = before.encode_to_vec();
    write_string_map(3, &request.generics, &mut out);
    after.encode(&mut out).expect("a Vec grows as needed");
    out
}

/// The order Python's protobuf (upb) writes map keys in when asked for a deterministic
/// serialization: bytewise over the common length, and of two keys where one is a prefix of
/// the other, the longer first ("AB" before "A", "B" before "").
fn upb_key_order(a: &str, b: &str) -> std::cmp::Ordering {
    let common = a.len().min(b.len());
    a.as_bytes()[..common]
        .cmp(&b.as_bytes()[..common])
        .then(b.len().cmp(&a.len()))
}

/// A `map<string, string>` field, entries in upb's order, key and value always written.
fn write_string_map(tag: u32, map: &BTreeMap<String, String>, out: &mut Vec<u8>) {
    let mut entries: Vec<(&String, &String)> = map.iter().collect();
    entries.sort_by(|a, b| upb_key_order(a.0, b.0));
    for (key, value) in entries {
        let field = |number: u32, text: &str, out: &mut Vec<u8>| {
            encode_key(number, WireType::LengthDelimited, out);
            encode_varint(text.len() as u64, out);
            out.extend_from_slice(text.as_bytes());
        };
        let mut entry = Vec::with_capacity(key.len() + value.len() + 4);
        field(1, key, &mut entry);
        field(2, value, &mut entry);
        encode_key(tag, WireType::LengthDelimited, out);
        encode_varint(entry.len() as u64, out);
        out.extend_from_slice(&entry);
    }
}

/// What to compile: the Rust twin of `CompileClient.build_request`'s arguments.
#[derive(Clone, Debug, Default)]
pub struct Source {
    /// The file holding the entry, as (logical name, text).
    pub file: (String, String),
    /// Further files the entry's module links (name, text).
    pub extra: Vec<(String, String)>,
    /// Entry function name, optionally `module::name`.
    pub entry: String,
    /// Generic arguments by name.
    pub generics: Vec<(String, String)>,
    /// Generic arguments by position (when names are not given).
    pub generic_args: Vec<String>,
    /// "sm_90"; empty: the server's default.
    pub target: String,
    /// 0..3; None: the server's default (3).
    pub opt_level: Option<u32>,
    /// "x86_64" or "aarch64"; empty: the server's default.
    pub host_arch: String,
    pub lineinfo: bool,
    /// Keep f16 mma accumulators of loops nested in loops in f16 at every step (default:
    /// carried in f32 and rounded once after the loop).
    pub exact_accumulators: bool,
    /// Multiply f32 mma operands by f32 FMA (default: products the tensor cores take, as
    /// three TF32 products there).
    pub exact_f32_products: bool,
    /// Compile a plain kernel. By default the kernel waits for prior grids before it touches
    /// memory, so that hosts launch it early (programmatic dependent launch).
    pub plain_launch: bool,
    /// Compile the occupancy variant: this hint where the entry names no occupancy and
    /// multiplies no tiles (0: the entry's own hints only).
    pub occupancy_variant: u32,
    pub skip_cache: bool,
    /// What the host knows about its tensor arguments (see `TensorFacts`).
    pub specialization: Vec<TensorFacts>,
}

impl Source {
    /// `entry` of the Rust source `text`, named `file_name` in diagnostics.
    pub fn new(file_name: &str, text: &str, entry: &str) -> Self {
        Source {
            file: (file_name.to_string(), text.to_string()),
            entry: entry.to_string(),
            ..Default::default()
        }
    }

    pub fn generic(mut self, name: &str, value: impl ToString) -> Self {
        self.generics.push((name.to_string(), value.to_string()));
        self
    }

    pub fn target(mut self, sm: &str) -> Self {
        self.target = sm.to_string();
        self
    }

    pub fn host_arch(mut self, arch: &str) -> Self {
        self.host_arch = arch.to_string();
        self
    }

    /// The `CompileRequest` Python's `build_request` makes from the same arguments.
    pub fn request(&self) -> CompileRequest {
        let mut sources = vec![SourceFile {
            name: self.file.0.clone(),
            text: self.file.1.clone(),
        }];
        sources.extend(self.extra.iter().map(|(name, text)| SourceFile {
            name: name.clone(),
            text: text.clone(),
        }));
        CompileRequest {
            sources,
            entry: self.entry.clone(),
            generics: self.generics.iter().cloned().collect(),
            generic_args: self.generic_args.clone(),
            target: self.target.clone(),
            options: Some(CompileOptions {
                opt_level: self.opt_level,
                host_arch: self.host_arch.clone(),
                lineinfo: self.lineinfo,
                skip_cache: self.skip_cache,
                exact_accumulators: self.exact_accumulators,
                exact_f32_products: self.exact_f32_products,
                plain_launch: self.plain_launch,
                occupancy_variant: self.occupancy_variant,
                // early_launch (deprecated) stays false: plain_launch decides
                ..Default::default()
            }),
            specialization: self.specialization.clone(),
        }
    }
}
