// SPDX-License-Identifier: GPL-2.0-only
// Clang's thread-safety attributes, as in Abseil and Envoy. A clang build with -Wthread-safety
// checks that members marked GUARDED_BY are touched only with their mutex held; other compilers
// see nothing.
#pragma once

#if defined(__clang__)
#define RL_THREAD_ANNOTATION(x) __attribute__((x))
#else
#define RL_THREAD_ANNOTATION(x)
#endif

#define CAPABILITY(x) RL_THREAD_ANNOTATION(capability(x))
#define SCOPED_CAPABILITY RL_THREAD_ANNOTATION(scoped_lockable)
#define GUARDED_BY(x) RL_THREAD_ANNOTATION(guarded_by(x))
#define PT_GUARDED_BY(x) RL_THREAD_ANNOTATION(pt_guarded_by(x))
#define REQUIRES(...) RL_THREAD_ANNOTATION(requires_capability(__VA_ARGS__))
#define EXCLUDES(...) RL_THREAD_ANNOTATION(locks_excluded(__VA_ARGS__))
#define ACQUIRE(...) RL_THREAD_ANNOTATION(acquire_capability(__VA_ARGS__))
#define RELEASE(...) RL_THREAD_ANNOTATION(release_capability(__VA_ARGS__))
#define TRY_ACQUIRE(...) RL_THREAD_ANNOTATION(try_acquire_capability(__VA_ARGS__))
#define ASSERT_CAPABILITY(x) RL_THREAD_ANNOTATION(assert_capability(x))
#define NO_THREAD_SAFETY_ANALYSIS RL_THREAD_ANNOTATION(no_thread_safety_analysis)
