/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * How the code shared by the BPF programs and userspace asks the compiler
 * (clang -target bpf, or the host's gcc or clang) for inlining and unrolling.
 */
#ifndef PACER_COMPILER_H
#define PACER_COMPILER_H

/* Inlined everywhere: the BPF side then sees constant array indexes. */
#define PACER_INLINE static inline __attribute__((always_inline))

/* Emitted once and called: code the BPF verifier would otherwise see on every path. */
#define PACER_NOINLINE static __attribute__((noinline, unused))

/* Loops over the rows run a fixed count: unrolled, every index is a constant. */
#ifdef __clang__
#define PACER_UNROLL _Pragma("unroll")
#else
#define PACER_UNROLL _Pragma("GCC unroll 8")
#endif

/* Loops whose body loads from memory: unrolled, clang hoists every load and spills. */
#ifdef __clang__
#define PACER_NO_UNROLL _Pragma("clang loop unroll(disable)")
#else
#define PACER_NO_UNROLL
#endif

#endif /* PACER_COMPILER_H */
