// libsystemc needs an sc_main; programs that use the SystemC backends through a registry have
// their own main() and never call it (the kernel is driven by HostCpu::run). Linked into those
// programs through sgpu_systemc_backend's interface sources; the example platform has its own.
#include <cstdio>
#include <cstdlib>

extern "C" int sc_main(int, char**) {
  std::fputs("sc_main: this program drives SystemC itself and has no sc_main\n", stderr);
  return EXIT_FAILURE;
}
