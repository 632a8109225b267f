#include "common/verilated_thread.hpp"

#include <verilated.h>

namespace sgpu::tb {

VerilatedContext* thread_context() { return Verilated::threadContextp(); }

void set_thread_context(VerilatedContext* context) { Verilated::threadContextp(context); }

}  // namespace sgpu::tb
