// Execution contexts for fibers: a hand-written x86-64 stack switch, or ucontext elsewhere.
#pragma once

#include <cstddef>

#if defined(__x86_64__) && !defined(FSTITCH_HOST_USE_UCONTEXT)
#define FSTITCH_HOST_ASM_SWITCH 1
#else
#define FSTITCH_HOST_ASM_SWITCH 0
#include <ucontext.h>
#endif

namespace fstitch::host {

using FiberEntry = void (*)(void* arg);

// Tells AddressSanitizer (a no-op elsewhere) that [low, low + bytes) of a fiber stack holds no
// live frames: the redzones of frames that never returned (a fiber ends by switching away),
// or of frames about to be copied aside or overwritten, are poisoned until then.
void forget_stack_frames(char* low, std::size_t bytes);

// A suspended flow of control. A context is either prepared to start a function on a
// stack of its own, or is a slot that switch_to fills with the code that leaves it.
class Context {
 public:
  Context() = default;
  ~Context();
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  // The next switch to this context calls entry(arg) on [stack_low, stack_low + bytes).
  // entry must never return: a fiber ends by switching away for good.
  void prepare(char* stack_low, std::size_t stack_bytes, FiberEntry entry, void* arg);

  // Saves the running code into `from` and resumes `to`. `from_finished` says `from` will
  // never be resumed (sanitizers then release what they track for its stack).
  static void switch_to(Context& from, Context& to, bool from_finished = false);

  // "x86-64 assembly" or "ucontext": how contexts switch in this build.
  static const char* mechanism();

  // The lowest address a suspended (or prepared, not yet started) context has in use on its
  // stack; nullptr where the mechanism does not say (ucontext): all of its stack then.
  const void* stack_in_use_from() const;

 private:
  [[noreturn]] static void start(Context* self);
  void new_sanitizer_fiber();
#if !FSTITCH_HOST_ASM_SWITCH
  static void start_ucontext(unsigned int high, unsigned int low);
#endif

  FiberEntry entry_ = nullptr;
  void* arg_ = nullptr;
  // The stack this context runs on, for sanitizer bookkeeping (unknown for a thread's own
  // stack until something switches away from it).
  const void* stack_low_ = nullptr;
  std::size_t stack_bytes_ = 0;
  // ThreadSanitizer's fiber for this context: created by prepare, or the thread's own one,
  // recorded when a context never prepared switches away. Unused in other builds.
  [[maybe_unused]] void* tsan_fiber_ = nullptr;
#if FSTITCH_HOST_ASM_SWITCH
  void* sp_ = nullptr;
#else
  ucontext_t uc_{};
#endif
};

}  // namespace fstitch::host
