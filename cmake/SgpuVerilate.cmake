# sgpu_verilate(<target> TOP <module> SOURCES <files...> [FAST] [PREFIX <class>] [ARGS <verilator args...>])
#
# Verilates one RTL top into one STATIC library. Every test and tool that simulates that top
# links the library instead of verilating again: on 2 cores the Verilator runtime and the model
# are the slowest part of the build, so each configuration is compiled exactly once.
#
# Two configurations (docs/architecture.md, "Simulation models"):
#   checked (default)  FST tracing compiled in (waveforms are opened only on request, see
#                      tb/common/bench.hpp), assertions on, X assignments unique (random per
#                      seed); generated C++ at -O2. What the tests use.
#   FAST               no trace code, no assertion code, `--x-assign fast`; generated C++ at
#                      -O3. Same RTL, same cycle behaviour for X-free designs; what the demo,
#                      the benchmarks and co-simulation use. Initial values stay `unique` (seeded
#                      random): that costs only at construction, and keeps reset bugs visible.
# PREFIX names the model's C++ class (default V<module>): two configurations of one top linked
# into one program need two names.
#
# Verilator's runtime (verilated.cpp, verilated_fst_c.cpp with its FST writer,
# verilated_threads.cpp) does not depend on the model: verilate() adds it to every model, which
# compiled it once per model (about 20 s of CPU each time, 11 models). Every model made here has
# the same settings (FST tracing, no SystemC, no coverage), so the runtime is compiled once, into
# sgpu_verilated_runtime, and each model links that instead.
function(sgpu_verilate target)
  cmake_parse_arguments(A "FAST" "TOP;PREFIX" "SOURCES;ARGS" ${ARGN})
  if(NOT A_TOP OR NOT A_SOURCES)
    message(FATAL_ERROR "sgpu_verilate(${target}): TOP and SOURCES are required")
  endif()
  if(NOT A_PREFIX)
    set(A_PREFIX V${A_TOP})
  endif()
  if(A_FAST)
    set(_trace "")
    set(_checks --x-assign fast --x-initial unique)
    set(_opt_fast -O3)
  else()
    set(_trace TRACE_FST)
    set(_checks --assert --x-assign unique --x-initial unique)
    set(_opt_fast -O2)
  endif()
  add_library(${target} STATIC)
  set(incargs "")
  foreach(dir ${SGPU_RTL_INCLUDE_DIRS})
    list(APPEND incargs -I${dir})
  endforeach()
  set_target_properties(${target} PROPERTIES POSITION_INDEPENDENT_CODE ON)
  verilate(${target}
    TOP_MODULE ${A_TOP}
    PREFIX ${A_PREFIX}
    ${_trace}
    SOURCES ${A_SOURCES}
    # Lint is `make lint`'s job (verilator -Wall, see rtl/lint.vlt); here warnings are not fatal.
    VERILATOR_ARGS ${_checks} -Wno-fatal ${incargs} ${A_ARGS}
    OPT_FAST ${_opt_fast}
    OPT_SLOW -O1
    OPT_GLOBAL -O2)
  # Trace code runs only while a waveform is written (debugging): compile it unoptimised. At -O2
  # it is most of a large model's compile time (a board model's trace file: 44 s of CPU at -O2,
  # 3 s at -O0).
  get_target_property(_sources ${target} SOURCES)
  list(FILTER _sources INCLUDE REGEX "__Trace__")
  if(_sources)
    set_property(SOURCE ${_sources} APPEND_STRING PROPERTY COMPILE_FLAGS " -O0")
  endif()
  # One shared runtime (see the top of this file) instead of the model's own copy.
  get_target_property(_all ${target} SOURCES)
  set(_runtime ${_all})
  list(FILTER _runtime INCLUDE REGEX "^${VERILATOR_ROOT}/include/[^/]*\\.cpp$")
  list(FILTER _all EXCLUDE REGEX "^${VERILATOR_ROOT}/include/[^/]*\\.cpp$")
  set_property(TARGET ${target} PROPERTY SOURCES ${_all})
  if(NOT TARGET sgpu_verilated_runtime)
    if(A_FAST)
      message(FATAL_ERROR "sgpu_verilate(${target}): the first model must be a checked one (it brings the "
                          "runtime with the FST writer that the fast ones share)")
    endif()
    add_library(sgpu_verilated_runtime STATIC ${_runtime})
    set_target_properties(sgpu_verilated_runtime PROPERTIES POSITION_INDEPENDENT_CODE ON)
    target_compile_definitions(sgpu_verilated_runtime PRIVATE
      VM_COVERAGE=0 VM_SC=0 VM_TRACE=1 VM_TRACE_VCD=0 VM_TRACE_FST=1)
    target_compile_options(sgpu_verilated_runtime PRIVATE -O2 -w)
    if(SGPU_SANITIZE)
      # GTKWave's FST writer (fstapi.c, inside verilated_fst_c.cpp) stores 32-bit words at odd
      # addresses on purpose (x86 allows it) and shifts negative ints left (its variable-length
      # integer code); those two UBSan checks are off in Verilator's runtime only.
      target_compile_options(sgpu_verilated_runtime PRIVATE -fno-sanitize=alignment,shift)
    endif()
    target_include_directories(sgpu_verilated_runtime SYSTEM PUBLIC
      ${VERILATOR_ROOT}/include ${VERILATOR_ROOT}/include/vltstd)
    # What verilate() links the model with (zlib for FST, threads) is the runtime's to need.
    get_target_property(_libs ${target} LINK_LIBRARIES)
    if(_libs)
      target_link_libraries(sgpu_verilated_runtime PUBLIC ${_libs})
    endif()
    set(SGPU_VERILATED_RUNTIME_FILES "${_runtime}" CACHE INTERNAL "the shared Verilator runtime's sources")
  elseif(A_FAST)
    # A fast model needs a subset of the runtime (no FST writer). verilated.cpp itself does not
    # depend on VM_TRACE (only verilated.h's WAVES alias does), so the one runtime serves both
    # configurations without an ODR mismatch.
    foreach(_file ${_runtime})
      if(NOT _file IN_LIST SGPU_VERILATED_RUNTIME_FILES)
        message(FATAL_ERROR "sgpu_verilate(${target}): it needs ${_file}, which the shared runtime lacks")
      endif()
    endforeach()
  elseif(NOT "${_runtime}" STREQUAL "${SGPU_VERILATED_RUNTIME_FILES}")
    message(FATAL_ERROR "sgpu_verilate(${target}): its Verilator runtime (${_runtime}) differs from the "
                        "shared one (${SGPU_VERILATED_RUNTIME_FILES}); all models must have the same settings")
  endif()
  target_link_libraries(${target} PUBLIC sgpu_verilated_runtime)
  # Consumers need the same VM_TRACE settings as the model to use the trace API. A fast model
  # has no trace API and sets nothing: a program linking both configurations sees the checked
  # one's settings only (they define nothing the fast model's header depends on).
  if(NOT A_FAST)
    target_compile_definitions(${target} PUBLIC VM_TRACE=1 VM_TRACE_FST=1)
  endif()
  # Verilated code and Verilator's runtime headers are not ours to warn about, here or in the
  # code that includes them (-isystem wins over verilate()'s plain -I for the same folders).
  target_compile_options(${target} PRIVATE -w)
  if(SGPU_SANITIZE)
    # Two UBSan checks are off in the generated model, which is Verilator's code, not ours:
    # shift — Verilator 5.006 writes `(~x >> n) << n` on promoted narrow unsigned values (the CDC
    # FIFOs' gray-code pointers), a left shift of a negative int, undefined in C++17 (defined since
    # C++20) and harmless; alignment — its trace code (verilated_trace.h, inlined here) packs
    # values into the trace buffer at any address on purpose.
    target_compile_options(${target} PRIVATE -fno-sanitize=shift,alignment)
  endif()
  target_include_directories(${target} SYSTEM PUBLIC
    ${VERILATOR_ROOT}/include ${VERILATOR_ROOT}/include/vltstd
    ${CMAKE_CURRENT_BINARY_DIR}/CMakeFiles/${target}.dir/${A_PREFIX}.dir)
endfunction()
