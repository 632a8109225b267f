# sgpu_add_bench(<target>): registers an executable as a benchmark.
#
# A benchmark prints exactly one JSON object on stdout mapping metric names to numbers.
# `make bench` runs every registered benchmark (from an optimised build) and merges their
# objects into one (tools/run_bench.py). Metric names are public: keep them stable.
function(sgpu_add_bench target)
  set_property(GLOBAL APPEND PROPERTY SGPU_BENCHES $<TARGET_FILE:${target}>)
endfunction()

# Writes the list of benchmark executables where tools/run_bench.py finds it.
function(sgpu_write_bench_list)
  get_property(benches GLOBAL PROPERTY SGPU_BENCHES)
  string(REPLACE ";" "\n" lines "${benches}")
  file(GENERATE OUTPUT ${CMAKE_BINARY_DIR}/benches.txt CONTENT "${lines}\n")
endfunction()
