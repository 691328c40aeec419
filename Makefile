# torch_tpu build. `make demo` and `make test` do all the set-up on a fresh clone.
PYTHON_SYS ?= python3.11
VENV       := .venv
PY         := $(VENV)/bin/python
BUILD      := build

CC      ?= cc
CFLAGS_BASE := -std=c11 -fPIC -g -D_GNU_SOURCE -Wall -Wextra -Werror -Wno-unused-parameter
CFLAGS  := $(CFLAGS_BASE) -O2
LDLIBS  := -ldl -lpthread -lm

CORE_SRC   := $(sort $(wildcard csrc/core/base/*.c csrc/core/pjrt/*.c csrc/core/shlo/*.c \
                csrc/core/lower/*.c csrc/core/lower/*/*.c csrc/core/graph/*.c csrc/core/runtime/*.c))
CORE_HDR   := $(filter-out csrc/core/tests/%,$(wildcard csrc/core/*/*.h csrc/core/*/*/*.h))
TEST_HDR   := $(wildcard csrc/core/tests/*.h)
CORE_OBJ   := $(CORE_SRC:%.c=$(BUILD)/%.o)
TEST_SRC   := $(sort $(wildcard csrc/core/tests/test_*.c))
TEST_BIN   := $(TEST_SRC:csrc/core/tests/%.c=$(BUILD)/tests/%)
ASAN_BIN   := $(TEST_SRC:csrc/core/tests/%.c=$(BUILD)/asan/%)
ASAN_OBJ   := $(CORE_SRC:%.c=$(BUILD)/asan/obj/%.o)
ASAN_FLAGS := $(CFLAGS_BASE) -O1 -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=undefined

.PHONY: all venv core bridge demo test test-full test-c test-py test-py-fused test-asan bench opinfo clean ops-report fuzz-views test-asan-py conformance

all: bridge

# ---- set-up ---------------------------------------------------------------
$(VENV)/.stamp: requirements.txt
	test -x $(PY) || $(PYTHON_SYS) -m venv $(VENV) || python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -r requirements.txt
	touch $@
venv: $(VENV)/.stamp

# ---- C core -----------------------------------------------------------------
$(BUILD)/%.o: %.c $(CORE_HDR)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c $< -o $@
# ar names members by file name: core .c names stay unique across folders.
$(BUILD)/libttcore.a: $(CORE_OBJ)
	rm -f $@; ar rcs $@ $^
core: $(BUILD)/libttcore.a

$(BUILD)/tests/%: csrc/core/tests/%.c $(TEST_HDR) $(BUILD)/libttcore.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $< $(BUILD)/libttcore.a -o $@ $(LDLIBS)

$(BUILD)/asan/obj/%.o: %.c $(CORE_HDR)
	@mkdir -p $(dir $@)
	$(CC) $(ASAN_FLAGS) -c $< -o $@
$(BUILD)/asan/libttcore.a: $(ASAN_OBJ)
	rm -f $@; ar rcs $@ $^
$(BUILD)/asan/%: csrc/core/tests/%.c $(TEST_HDR) $(BUILD)/asan/libttcore.a
	@mkdir -p $(dir $@)
	$(CC) $(ASAN_FLAGS) $< $(BUILD)/asan/libttcore.a -o $@ $(LDLIBS)

# Plugin paths for the C tests (no Python at test time, only to locate them).
PLUGIN_ENV = TT_TEST_PLUGIN_NEW="$$($(PY) -c 'import lammps_jax_pjrt_cpu as m; print(m.PLUGIN_PATH)')" \
             TT_TEST_PLUGIN_OLD="$$($(PY) -c 'import xla_plugins.xla_cpu_pjrt as m, os; print(os.path.join(os.path.dirname(m.__file__), "xla_cpu_pjrt.so"))')" \
             TT_TEST_FAKE_DIR=$(BUILD)/fake

$(BUILD)/fake/.stamp: csrc/core/tests/fake_plugin.c
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -fPIC -shared -DFAKE_MAJOR=1 $< -o $(BUILD)/fake/fake_major.so
	$(CC) -std=c11 -fPIC -shared -DFAKE_SHORT=1 $< -o $(BUILD)/fake/fake_short.so
	$(CC) -std=c11 -fPIC -shared $< -o $(BUILD)/fake/fake_nosym.so -DFAKE_NOSYM=1
	touch $@

# Two binaries at a time (TEST_JOBS), each one's output printed whole.
TEST_JOBS ?= 2
test-c: venv $(TEST_BIN) $(BUILD)/fake/.stamp
	@$(PLUGIN_ENV) TEST_JOBS=$(TEST_JOBS) sh tools/run_c_tests.sh $(TEST_BIN)

test-asan: venv $(ASAN_BIN) $(BUILD)/fake/.stamp
	@set -e; for t in $(ASAN_BIN); do echo "== $$t (asan)"; \
	  $(PLUGIN_ENV) ASAN_OPTIONS=detect_leaks=0:protect_shadow_gap=0 UBSAN_OPTIONS=print_stacktrace=1 $$t; done

# ---- bridge + Python package --------------------------------------------------
BRIDGE_SRC := $(wildcard csrc/bridge/*.cpp csrc/bridge/*.h csrc/bridge/aten/*.cpp csrc/bridge/aten/*.h) setup.py
# The extension is built in place (incremental, ninja); the editable install
# only registers the package and its torch.backends entry point.
$(BUILD)/.installed: $(VENV)/.stamp setup.py torch_tpu/_version.py
	@mkdir -p $(BUILD)
	TORCH_TPU_SKIP_EXT=1 TORCH_DEVICE_BACKEND_AUTOLOAD=0 $(PY) -m pip install -q --no-build-isolation --no-deps -e .
	touch $@
$(BUILD)/.bridge: $(BUILD)/.installed $(BUILD)/libttcore.a $(BRIDGE_SRC)
	TORCH_DEVICE_BACKEND_AUTOLOAD=0 MAX_JOBS=2 $(PY) setup.py -q build_ext --inplace
	touch $@
bridge: $(BUILD)/.bridge

# ---- what users run -------------------------------------------------------------
demo: bridge
	$(PY) examples/train_mlp.py
	$(VENV)/bin/torchrun --standalone --nproc-per-node 2 examples/train_ddp.py

# The disk cache of the suite's processes: under build/, never the user's.
TEST_ENV = TORCH_TPU_CACHE_DIR=$(CURDIR)/$(BUILD)/cache
# Two workers (pytest-xdist), one file per worker at a time: a test is host
# work and small single-threaded compiles, so the suite uses both cores.
# PYTEST_WORKERS=0 runs it in one process.
PYTEST_WORKERS ?= 2
PYTEST = $(PY) -m pytest -q -p no:cacheprovider $(if $(filter-out 0,$(PYTEST_WORKERS)),-n $(PYTEST_WORKERS) --dist loadfile)
# Every test runs in Strict Eager. The Fused pass (TORCH_TPU_DEFER_AND_FUSE=1:
# every op recorded and run in fused programs must give Strict's and CPU's
# results and errors) runs the folders whose outcome depends on the eager
# mode; `make test-full` runs it over every folder (tests/ops and tests/dist too).
FUSED_TESTS := tests/semantics tests/modes tests/compile tests/models tests/opinfo
test-py: bridge
	$(TEST_ENV) $(PYTEST) tests

test-py-fused: bridge
	$(TEST_ENV) TORCH_TPU_DEFER_AND_FUSE=1 $(PYTEST) $(FUSED_TESTS)

test: test-c test-py test-py-fused

# The long suites (run before resolving an issue): the randomized sweeps at
# their full sizes (tests/suite.py), and the Fused pass over the whole suite.
FULL_ENV = TORCH_TPU_TEST_FULL=1
test-full: test-c bridge
	$(TEST_ENV) $(FULL_ENV) $(PYTEST) tests
	$(TEST_ENV) $(FULL_ENV) TORCH_TPU_DEFER_AND_FUSE=1 $(PYTEST) tests

# ---- Python under ASan ---------------------------------------------------------
# The bridge compiled with -fsanitize=address,undefined and linked with the
# ASan core, in build/asan-py/torch_tpu: a tree of links to torch_tpu's Python
# files plus that extension (the normal build is untouched), run from that
# folder so that the worktree's own torch_tpu is not found first. Python is not
# instrumented, so gcc's libasan is LD_PRELOADed, and libstdc++ with it: ASan
# resolves the real __cxa_throw when it starts, and with libstdc++ loaded only
# later (by torch) the first C++ exception dies in ASan's interceptor
# ("CHECK failed ... real___cxa_throw != 0"); leaks are not reported
# (CPython and torch keep allocations to exit); protect_shadow_gap=0 for the
# PJRT plugin's large mappings; reports go to build/asan-py/asan.PID (pytest
# captures stderr). Pass PYTEST_ARGS to run a part of the suite:
#   make test-asan-py PYTEST_ARGS="tests/semantics/test_views_fuzz.py"
ASAN_PY    := $(BUILD)/asan-py
ASAN_PY_SO := $(ASAN_PY)/torch_tpu/_C$(shell $(PY) -c 'import sysconfig; print(sysconfig.get_config_var("EXT_SUFFIX"))' 2>/dev/null)
PYTEST_ARGS ?= tests
ASAN_PY_ENV = LD_PRELOAD="$$(gcc -print-file-name=libasan.so):$$(gcc -print-file-name=libstdc++.so.6)" \
              ASAN_OPTIONS=detect_leaks=0:protect_shadow_gap=0:allocator_may_return_null=1:log_path=$(CURDIR)/$(ASAN_PY)/asan \
              UBSAN_OPTIONS=print_stacktrace=1 PYTHONPATH=$(CURDIR)/$(ASAN_PY)

$(ASAN_PY_SO): $(BUILD)/asan/libttcore.a $(wildcard csrc/bridge/*.cpp csrc/bridge/*.h csrc/bridge/aten/*.cpp csrc/bridge/aten/*.h)
	@mkdir -p $(ASAN_PY)/torch_tpu $(ASAN_PY)/obj
	@for f in torch_tpu/*; do case "$$f" in *.so) ;; *) ln -sfn $(CURDIR)/$$f $(ASAN_PY)/$$f ;; esac; done
	@set -e; INC="$$($(PY) -c 'from torch.utils.cpp_extension import include_paths as i; import sysconfig; print(" ".join("-I"+p for p in i()+[sysconfig.get_paths()["include"]]))')"; \
	  ABI="$$($(PY) -c 'import torch; print(int(torch._C._GLIBCXX_USE_CXX11_ABI))')"; \
	  LIB="$$($(PY) -c 'import torch, os; print(os.path.join(os.path.dirname(torch.__file__), "lib"))')"; \
	  for src in csrc/bridge/*.cpp csrc/bridge/aten/*.cpp; do \
	    $(CXX) -fPIC -g -O1 -fno-omit-frame-pointer -fsanitize=address,undefined -std=c++20 -Wall -Wno-unused-parameter \
	      -D_GLIBCXX_USE_CXX11_ABI=$$ABI -DTORCH_API_INCLUDE_EXTENSION_H -DTORCH_EXTENSION_NAME=_C $$INC \
	      -c $$src -o $(ASAN_PY)/obj/$$(basename $$(dirname $$src))_$$(basename $$src .cpp).o; done; \
	  $(CXX) -shared -fsanitize=address,undefined $(ASAN_PY)/obj/*.o $(BUILD)/asan/libttcore.a \
	    -L$$LIB -lc10 -ltorch -ltorch_cpu -ltorch_python -ldl -lpthread -Wl,-rpath,$$LIB -o $@

test-asan-py: bridge $(ASAN_PY_SO)
	cd $(ASAN_PY) && $(ASAN_PY_ENV) $(CURDIR)/$(PY) -c 'import torch_tpu; assert "asan-py" in torch_tpu._C.__file__, torch_tpu._C.__file__'
	cd $(ASAN_PY) && $(ASAN_PY_ENV) $(CURDIR)/$(PY) -m pytest -q -p no:cacheprovider --rootdir=$(CURDIR) \
	  $(addprefix $(CURDIR)/,$(PYTEST_ARGS))

# The randomized view sweep of tests/semantics/test_views_fuzz.py with more cases
# (make test runs 500): FUZZ_CASES=N FUZZ_SEED=S make fuzz-views
FUZZ_CASES ?= 2000
FUZZ_SEED ?= 1234
fuzz-views: bridge
	TT_VIEW_FUZZ_CASES=$(FUZZ_CASES) TT_VIEW_FUZZ_SEED=$(FUZZ_SEED) $(PY) -m pytest -q tests/semantics/test_views_fuzz.py -k fuzz

bench: bridge
	$(PY) -m pip install -q matplotlib
	$(PY) bench/bench_ops.py
	$(PY) bench/bench_gpt.py
	$(PY) bench/bench_compile.py
	$(PY) bench/bench_dist.py

# The OpInfo conformance sweep (10-20 min on 2 cores): tests/opinfo/report.json, docs/op_coverage.md.
opinfo: bridge
	$(PY) -m tests.opinfo.run --full

# PyTorch's device-generic test files on tpu and CPU (hours on 2 cores): docs/conformance.md.
# FILES=test_foreach.py,test_optim.py picks files; PYTORCH_SRC=<a PyTorch checkout> fetches from it.
conformance: bridge
	$(PY) tools/conformance.py $(if $(FILES),--files $(FILES))

# The supported-op list in docs/supported-ops.md, from the core's lowering tables.
ops-report: bridge
	$(PY) tools/ops_report.py --docs

clean:
	rm -rf $(BUILD) torch_tpu/_C*.so *.egg-info
