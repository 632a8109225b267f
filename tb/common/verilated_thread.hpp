// The calling thread's current Verilated context, set and read from one translation unit.
//
// Verilator (5.006) keeps it in `Verilated::t_s`, a `thread_local` with a dynamic initialiser
// defined in verilated.cpp. Every other translation unit reaches it through GCC's TLS wrapper,
// and GCC 12's UBSan then reports "member access within null pointer of type 'ThreadLocal'" on a
// valid object (a false positive; the load itself succeeds), which fails every sanitized test
// that switches contexts. Keeping the only access outside Verilator's runtime in
// verilated_thread.cpp lets that one file be built without the null check (tb/common/
// CMakeLists.txt) while everything else stays fully sanitized.
#pragma once

class VerilatedContext;

namespace sgpu::tb {

/// Verilator's current context of the calling thread (its default one if none was set).
VerilatedContext* thread_context();

/// Makes `context` the calling thread's current context; nullptr makes Verilator fall back to
/// its default context at the next use.
void set_thread_context(VerilatedContext* context);

}  // namespace sgpu::tb
