// Which sanitizer the host runtime is built under. The fiber switches announce themselves to
// it (context.cpp), and kernels are compiled for it (compiler.cpp), so that it follows every
// thread of a block and sees the kernels' own memory accesses.
#pragma once

#if defined(__SANITIZE_ADDRESS__)
#define FSTITCH_HOST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define FSTITCH_HOST_ASAN 1
#endif
#endif
#ifndef FSTITCH_HOST_ASAN
#define FSTITCH_HOST_ASAN 0
#endif

#if defined(__SANITIZE_THREAD__)
#define FSTITCH_HOST_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define FSTITCH_HOST_TSAN 1
#endif
#endif
#ifndef FSTITCH_HOST_TSAN
#define FSTITCH_HOST_TSAN 0
#endif
