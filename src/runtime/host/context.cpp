#include "runtime/host/context.hpp"

#include <cstdint>
#include <cstdlib>

#include "runtime/host/sanitizer.hpp"

#if FSTITCH_HOST_ASAN
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#endif
#if FSTITCH_HOST_TSAN
#include <sanitizer/tsan_interface.h>
#endif

#if FSTITCH_HOST_ASM_SWITCH
// fst_host_switch_stack(save, load): pushes the callee-saved registers, MXCSR and the x87
// control word on the current stack, stores the stack pointer in *save, loads `load` and
// pops the same from there. fst_host_fiber_start is where a prepared stack "returns" to:
// it calls r13(r12) and marks the bottom of the call chain for unwinders.
asm(R"(
  .pushsection .text
  .p2align 4
  .globl fst_host_switch_stack
  .hidden fst_host_switch_stack
  .type fst_host_switch_stack, @function
fst_host_switch_stack:
  pushq %rbp
  pushq %rbx
  pushq %r12
  pushq %r13
  pushq %r14
  pushq %r15
  subq $8, %rsp
  stmxcsr (%rsp)
  fnstcw 4(%rsp)
  movq %rsp, (%rdi)
  movq %rsi, %rsp
  ldmxcsr (%rsp)
  fldcw 4(%rsp)
  addq $8, %rsp
  popq %r15
  popq %r14
  popq %r13
  popq %r12
  popq %rbx
  popq %rbp
  ret
  .size fst_host_switch_stack, .-fst_host_switch_stack

  .p2align 4
  .globl fst_host_fiber_start
  .hidden fst_host_fiber_start
  .type fst_host_fiber_start, @function
fst_host_fiber_start:
  .cfi_startproc
  .cfi_undefined rip
  movq %r12, %rdi
  callq *%r13
  ud2
  .cfi_endproc
  .size fst_host_fiber_start, .-fst_host_fiber_start
  .popsection
)");

extern "C" void fst_host_switch_stack(void** save, void* load);
extern "C" void fst_host_fiber_start();
#endif

namespace fstitch::host {
namespace {

#if FSTITCH_HOST_ASAN
// The context being left by the switch in progress on this thread: whoever resumes
// records its stack bounds, which sanitizers need to switch back to it.
thread_local Context* t_leaving = nullptr;
#endif

}  // namespace

void forget_stack_frames(char* low, std::size_t bytes) {
#if FSTITCH_HOST_ASAN
  ASAN_UNPOISON_MEMORY_REGION(low, bytes);
#else
  (void)low;
  (void)bytes;
#endif
}

Context::~Context() {
#if FSTITCH_HOST_TSAN
  if (entry_ != nullptr && tsan_fiber_ != nullptr) __tsan_destroy_fiber(tsan_fiber_);
#endif
}

// ThreadSanitizer treats each fiber as a thread of its own. A prepared context gets a fresh
// one each time: the previous run ended by switching away, and its frames would stay on the
// sanitizer's shadow call stack forever. Called before entry_ is set: a context prepared
// before owns its fiber; one never prepared holds its thread's own, which is not ours.
void Context::new_sanitizer_fiber() {
#if FSTITCH_HOST_TSAN
  if (entry_ != nullptr && tsan_fiber_ != nullptr) __tsan_destroy_fiber(tsan_fiber_);
  tsan_fiber_ = __tsan_create_fiber(0);
#endif
}

const char* Context::mechanism() {
  return FSTITCH_HOST_ASM_SWITCH ? "x86-64 assembly" : "ucontext";
}

const void* Context::stack_in_use_from() const {
#if FSTITCH_HOST_ASM_SWITCH
  return sp_;  // the switch's saved registers are at and above it; below is free
#else
  return nullptr;
#endif
}

void Context::start(Context* self) {
#if FSTITCH_HOST_ASAN
  __sanitizer_finish_switch_fiber(nullptr, &t_leaving->stack_low_, &t_leaving->stack_bytes_);
#endif
  self->entry_(self->arg_);
  std::abort();  // entries end by switching away; reaching here is a runtime bug
}

#if FSTITCH_HOST_ASM_SWITCH

void Context::prepare(char* stack_low, std::size_t stack_bytes, FiberEntry entry, void* arg) {
  new_sanitizer_fiber();
  entry_ = entry;
  arg_ = arg;
  stack_low_ = stack_low;
  stack_bytes_ = stack_bytes;
  forget_stack_frames(stack_low, stack_bytes);
  // The frame fst_host_switch_stack pops, from the lowest address up: MXCSR and x87 control
  // word, r15, r14, r13 (function), r12 (argument), rbx, rbp, return address. After the
  // return the stack pointer is 16-byte aligned, as a call from fst_host_fiber_start needs.
  const std::uintptr_t top =
      (reinterpret_cast<std::uintptr_t>(stack_low) + stack_bytes) & ~std::uintptr_t{15};
  auto* after_return = reinterpret_cast<std::uint64_t*>(top - 16);
  std::uint32_t mxcsr = 0;
  std::uint16_t x87_control = 0;
  asm volatile("stmxcsr %0" : "=m"(mxcsr));
  asm volatile("fnstcw %0" : "=m"(x87_control));
  after_return[-1] = reinterpret_cast<std::uint64_t>(&fst_host_fiber_start);
  after_return[-2] = 0;  // rbp: the end of the frame-pointer chain
  after_return[-3] = 0;  // rbx
  after_return[-4] = reinterpret_cast<std::uint64_t>(this);
  after_return[-5] = reinterpret_cast<std::uint64_t>(&Context::start);
  after_return[-6] = 0;  // r14
  after_return[-7] = 0;  // r15
  after_return[-8] = std::uint64_t{mxcsr} | (std::uint64_t{x87_control} << 32);
  sp_ = &after_return[-8];
}

#else

void Context::start_ucontext(unsigned int high, unsigned int low) {
  const std::uint64_t bits = (std::uint64_t{high} << 32) | low;
  start(reinterpret_cast<Context*>(static_cast<std::uintptr_t>(bits)));
}

void Context::prepare(char* stack_low, std::size_t stack_bytes, FiberEntry entry, void* arg) {
  new_sanitizer_fiber();
  entry_ = entry;
  arg_ = arg;
  stack_low_ = stack_low;
  stack_bytes_ = stack_bytes;
  forget_stack_frames(stack_low, stack_bytes);
  getcontext(&uc_);
  uc_.uc_stack.ss_sp = stack_low;
  uc_.uc_stack.ss_size = stack_bytes;
  uc_.uc_link = nullptr;
  const std::uint64_t bits = reinterpret_cast<std::uintptr_t>(this);
  makecontext(&uc_, reinterpret_cast<void (*)()>(&Context::start_ucontext), 2,
              static_cast<unsigned int>(bits >> 32), static_cast<unsigned int>(bits & 0xffffffffu));
}

#endif

void Context::switch_to(Context& from, Context& to, bool from_finished) {
#if FSTITCH_HOST_ASAN
  void* fake_stack = nullptr;
  t_leaving = &from;
  __sanitizer_start_switch_fiber(from_finished ? nullptr : &fake_stack, to.stack_low_, to.stack_bytes_);
#else
  (void)from_finished;
#endif
#if FSTITCH_HOST_TSAN
  // A context never prepared runs on a thread's own stack: it is that thread's fiber. The
  // switch (flags 0) orders everything `from` did before everything `to` does next, as
  // running on one OS thread does; the fibers of a block hand over to each other only here.
  if (from.entry_ == nullptr) from.tsan_fiber_ = __tsan_get_current_fiber();
  __tsan_switch_to_fiber(to.tsan_fiber_, 0);
#endif
#if FSTITCH_HOST_ASM_SWITCH
  fst_host_switch_stack(&from.sp_, to.sp_);
#else
  swapcontext(&from.uc_, &to.uc_);
#endif
#if FSTITCH_HOST_ASAN
  __sanitizer_finish_switch_fiber(fake_stack, &t_leaving->stack_low_, &t_leaving->stack_bytes_);
#endif
}

}  // namespace fstitch::host
