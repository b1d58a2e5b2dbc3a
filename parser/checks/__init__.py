"""Checks that run on a type-checked kernel, before lowering: rules rustc enforces in the
reference (borrows, moves, `unsafe`) that our type checker does not."""
