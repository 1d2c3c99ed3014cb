//! The threads the crate starts, each with a stack for values nested as
//! deep as the JSON parser allows (128 levels): parsing, shredding,
//! levels and reconstruction recurse one or more frames a level, and a
//! debug build's frames overflowed the 2 MiB a thread gets by default at
//! about 25 levels. The stack is reserved, not touched: it costs address
//! space, not memory.

use std::thread::{Builder, Scope, ScopedJoinHandle};

/// Bytes of stack of each thread: a debug build overflowed 2 MiB at about
/// 25 levels, some 80 KiB a level, so about 10 MiB for 128. The
/// integrations' runtimes give their threads as much (tokio's 2 MiB
/// overflowed planning a query of 90 `OR`ed comparisons in a debug build).
pub const STACK_BYTES: usize = 32 << 20;

/// Starts `f` on a thread of `scope`, as [`Scope::spawn`] does (which
/// also panics when the system cannot start a thread).
pub(crate) fn spawn_scoped<'scope, 'env, F, T>(
    scope: &'scope Scope<'scope, 'env>,
    f: F,
) -> ScopedJoinHandle<'scope, T>
where
    F: FnOnce() -> T + Send + 'scope,
    T: Send + 'scope,
{
    Builder::new()
        .stack_size(STACK_BYTES)
        .spawn_scoped(scope, f)
        .unwrap_or_else(|e| panic!("failed to spawn thread: {e}"))
}
