//! Measure tensor arguments into `TensorFacts` for a specialized compile request, exactly as
//! `client_stubs.specialization` does (both hosts share one artifact cache, so the same
//! arguments must ask for the same request): per axis, the largest power of two up to 16
//! dividing the extent and the stride (in elements); the largest power of two up to 16
//! dividing the base address (bytes), sent only where it relaxes the service's default of 16;
//! whether the last stride is not 1. A tensor with no fact beyond the defaults is left out.

use crate::plan::TensorLayout;
use crate::proto::TensorFacts;

pub const MAX_DIVISOR: u32 = 16;
/// What the service assumes of a base address without facts (bytes).
pub const DEFAULT_BASE_ALIGN: u32 = 16;

/// The largest power of two <= `limit` dividing `value` (0 is divisible by all; the sign
/// does not matter).
pub fn largest_divisor(value: i128, limit: u32) -> u32 {
    let mut divisor = 1u32;
    while divisor < limit && value.rem_euclid(2 * divisor as i128) == 0 {
        divisor *= 2;
    }
    divisor
}

/// The facts of a tensor with `layout`, as parameter `name`.
pub fn tensor_facts(name: &str, layout: &TensorLayout) -> TensorFacts {
    let align = largest_divisor(layout.ptr as i128, DEFAULT_BASE_ALIGN);
    TensorFacts {
        param: name.to_string(),
        dim_divisors: layout
            .shape
            .iter()
            .map(|&d| largest_divisor(d as i128, MAX_DIVISOR))
            .collect(),
        stride_divisors: layout
            .strides
            .iter()
            .map(|&s| largest_divisor(s as i128, MAX_DIVISOR))
            .collect(),
        base_align: if align == DEFAULT_BASE_ALIGN {
            0
        } else {
            align
        },
        any_last_stride: layout.strides.last().is_some_and(|&s| s != 1),
    }
}

/// Whether `facts` add to what the service assumes without them.
pub fn states_something(facts: &TensorFacts) -> bool {
    facts
        .dim_divisors
        .iter()
        .chain(&facts.stride_divisors)
        .any(|&d| d > 1)
        || facts.base_align != 0
        || facts.any_last_stride
}

/// Facts for every named tensor that has any, sorted by name (a stable request).
pub fn facts_for(tensors: &[(&str, &TensorLayout)]) -> Vec<TensorFacts> {
    let mut named: Vec<&(&str, &TensorLayout)> = tensors.iter().collect();
    named.sort_by(|a, b| a.0.cmp(b.0));
    named
        .into_iter()
        .map(|(name, layout)| tensor_facts(name, layout))
        .filter(states_something)
        .collect()
}
