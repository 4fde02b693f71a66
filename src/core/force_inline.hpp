// VRDMASIM_FORCE_INLINE: a function inlined into its caller whatever the
// compiler's own estimate, for the hot path's helpers that have one caller
// (a router's input occupancy, the DRAM's booking): the register saves and
// restores of a call cost as much as their usual path, and inlined they
// share the caller's values. Plain `inline` where the compiler has no such
// attribute.
#pragma once

#if defined(__GNUC__)
#define VRDMASIM_FORCE_INLINE inline __attribute__((always_inline))
// The same for a lambda, after its parameters: `[&](int x) VRDMASIM_FORCE_INLINE_LAMBDA { ... }`.
#define VRDMASIM_FORCE_INLINE_LAMBDA __attribute__((always_inline))
#else
#define VRDMASIM_FORCE_INLINE inline
#define VRDMASIM_FORCE_INLINE_LAMBDA
#endif
