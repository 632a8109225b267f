# sgpu_verilate(<target> TOP <module> SOURCES <files...> [ARGS <verilator args...>])
#
# Verilates one RTL top into one STATIC library. Every test and tool that simulates that top
# links the library instead of verilating again: on 2 cores the Verilator runtime and the model
# are the slowest part of the build, so each configuration is compiled exactly once.
#
# The model is built with FST tracing compiled in (waveforms are opened only on request, see
# tb/common/bench.hpp) and assertions enabled. Generated C++ is compiled with -O2.
#
# Verilator's runtime (verilated.cpp, verilated_fst_c.cpp with its FST writer,
# verilated_threads.cpp) does not depend on the model: verilate() adds it to every model, which
# compiled it once per model (about 20 s of CPU each time, 11 models). Every model made here has
# the same settings (FST tracing, no SystemC, no coverage), so the runtime is compiled once, into
# sgpu_verilated_runtime, and each model links that instead.
function(sgpu_verilate target)
  cmake_parse_arguments(A "" "TOP" "SOURCES;ARGS" ${ARGN})
  if(NOT A_TOP OR NOT A_SOURCES)
    message(FATAL_ERROR "sgpu_verilate(${target}): TOP and SOURCES are required")
  endif()
  add_library(${target} STATIC)
  set(incargs "")
  foreach(dir ${SGPU_RTL_INCLUDE_DIRS})
    list(APPEND incargs -I${dir})
  endforeach()
  set_target_properties(${target} PROPERTIES POSITION_INDEPENDENT_CODE ON)
  verilate(${target}
    TOP_MODULE ${A_TOP}
    PREFIX V${A_TOP}
    TRACE_FST
    SOURCES ${A_SOURCES}
    # Lint is `make lint`'s job (verilator -Wall, see rtl/lint.vlt); here warnings are not fatal.
    VERILATOR_ARGS --assert -Wno-fatal --x-assign unique --x-initial unique ${incargs} ${A_ARGS}
    OPT_FAST -O2
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
    add_library(sgpu_verilated_runtime STATIC ${_runtime})
    set_target_properties(sgpu_verilated_runtime PROPERTIES POSITION_INDEPENDENT_CODE ON)
    target_compile_definitions(sgpu_verilated_runtime PRIVATE
      VM_COVERAGE=0 VM_SC=0 VM_TRACE=1 VM_TRACE_VCD=0 VM_TRACE_FST=1)
    target_compile_options(sgpu_verilated_runtime PRIVATE -O2 -w)
    target_include_directories(sgpu_verilated_runtime SYSTEM PUBLIC
      ${VERILATOR_ROOT}/include ${VERILATOR_ROOT}/include/vltstd)
    # What verilate() links the model with (zlib for FST, threads) is the runtime's to need.
    get_target_property(_libs ${target} LINK_LIBRARIES)
    if(_libs)
      target_link_libraries(sgpu_verilated_runtime PUBLIC ${_libs})
    endif()
    set(SGPU_VERILATED_RUNTIME_FILES "${_runtime}" CACHE INTERNAL "the shared Verilator runtime's sources")
  elseif(NOT "${_runtime}" STREQUAL "${SGPU_VERILATED_RUNTIME_FILES}")
    message(FATAL_ERROR "sgpu_verilate(${target}): its Verilator runtime (${_runtime}) differs from the "
                        "shared one (${SGPU_VERILATED_RUNTIME_FILES}); all models must have the same settings")
  endif()
  target_link_libraries(${target} PUBLIC sgpu_verilated_runtime)
  # Consumers need the same VM_TRACE settings as the model to use the trace API.
  target_compile_definitions(${target} PUBLIC VM_TRACE=1 VM_TRACE_FST=1)
  # Verilated code and Verilator's runtime headers are not ours to warn about, here or in the
  # code that includes them (-isystem wins over verilate()'s plain -I for the same folders).
  target_compile_options(${target} PRIVATE -w)
  if(SGPU_SANITIZE)
    # Verilator 5.006 writes `(~x >> n) << n` on promoted narrow unsigned values (the CDC FIFOs'
    # gray-code pointers): a left shift of a negative int, undefined in C++17 (defined since C++20)
    # and harmless. It is the generated model's, not ours to fix: that one check is off in it.
    target_compile_options(${target} PRIVATE -fno-sanitize=shift)
  endif()
  target_include_directories(${target} SYSTEM PUBLIC
    ${VERILATOR_ROOT}/include ${VERILATOR_ROOT}/include/vltstd
    ${CMAKE_CURRENT_BINARY_DIR}/CMakeFiles/${target}.dir/V${A_TOP}.dir)
endfunction()
