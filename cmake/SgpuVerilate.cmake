# sgpu_verilate(<target> TOP <module> SOURCES <files...> [ARGS <verilator args...>])
#
# Verilates one RTL top into one STATIC library. Every test and tool that simulates that top
# links the library instead of verilating again: on 2 cores the Verilator runtime and the model
# are the slowest part of the build, so each configuration is compiled exactly once.
#
# The model is built with FST tracing compiled in (waveforms are opened only on request, see
# tb/common/bench.hpp) and assertions enabled. Generated C++ is compiled with -O2.
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
  # Consumers need the same VM_TRACE settings as the model to use the trace API.
  target_compile_definitions(${target} PUBLIC VM_TRACE=1 VM_TRACE_FST=1)
  # Verilated code and Verilator's runtime headers are not ours to warn about, here or in the
  # code that includes them (-isystem wins over verilate()'s plain -I for the same folders).
  target_compile_options(${target} PRIVATE -w)
  target_include_directories(${target} SYSTEM PUBLIC
    ${VERILATOR_ROOT}/include ${VERILATOR_ROOT}/include/vltstd
    ${CMAKE_CURRENT_BINARY_DIR}/CMakeFiles/${target}.dir/V${A_TOP}.dir)
endfunction()
