# krylov build. `make` builds build/libkrylov.a, build/libkrylov.so and
# build/krylov (drivers/, the command, against include/krylov.h alone, and
# tools/bench/, `krylov bench`, which may use the internals and links
# cuBLAS; neither is part of the library). CUDA is used when nvcc is found (PATH or CUDA_HOME); CUDA=0
# forces a CPU-only build, CUDA=1 insists on CUDA. SANITIZE=1 builds with
# AddressSanitizer and UBSan into build-asan/.
# `make fuzz FUZZ_SECONDS=N` runs each libFuzzer target for N seconds.
#
#   make            build          make test     build and run the tests
#   make demo       solve a built-in problem      make bench    CPU benchmarks
#   make format     clang-format the sources      make clean

CC      ?= cc
NVCC    ?= nvcc
CUDA_HOME ?= $(patsubst %/bin/nvcc,%,$(shell command -v $(NVCC) 2>/dev/null))

# FUZZ=1: the libFuzzer build (build-fuzz/, clang, CPU only, ASan+UBSan);
# `make fuzz` uses it.
FUZZ_CC ?= clang-14
ifeq ($(FUZZ),1)
  override CUDA := 0
  override CC := $(FUZZ_CC)
  BUILD ?= build-fuzz
endif

ifeq ($(origin CUDA), undefined)
  CUDA := $(if $(wildcard $(CUDA_HOME)/bin/nvcc),1,0)
endif
ifeq ($(CUDA),1)
  ifeq ($(wildcard $(CUDA_HOME)/bin/nvcc),)
    $(error CUDA=1 but nvcc was not found (set CUDA_HOME or put nvcc on PATH))
  endif
endif

# -fno-sanitize-recover=all: a UBSan report stops the program, so a test
# (or CI) run with one fails instead of printing and going on.
ifeq ($(FUZZ),1)
  SANFLAGS := -fsanitize=address,undefined,fuzzer-no-link \
              -fno-sanitize-recover=all -fno-omit-frame-pointer \
              -Wno-unknown-warning-option -Wno-pass-failed
else ifeq ($(SANITIZE),1)
  BUILD   ?= build-asan
  SANFLAGS := -fsanitize=address,undefined -fno-sanitize-recover=all \
              -fno-omit-frame-pointer
else
  BUILD   ?= build
  SANFLAGS :=
endif

# -Wno-format-truncation: messages are cut to their fixed buffers on purpose.
CFLAGS_BASE := -std=c11 -D_POSIX_C_SOURCE=200809L -O2 -g -fPIC -fopenmp \
               -Wall -Wextra -Werror -Wno-format-truncation $(SANFLAGS)
CFLAGS  ?=
ALL_CFLAGS := $(CFLAGS_BASE) -Iinclude -I. $(CFLAGS)
# The command's own code sees the public header only.
DRIVER_CFLAGS := $(CFLAGS_BASE) -Iinclude $(CFLAGS)
LDLIBS  := -lz -lm -fopenmp $(SANFLAGS)

MODULES := core io spmv precond graph solver data
# Each module's cuda_stubs.c stands in for its .cu files in a CPU-only build.
STUBS   := $(wildcard $(addsuffix /cuda_stubs.c,$(MODULES)))
LIB_C   := $(filter-out $(STUBS),$(wildcard $(addsuffix /*.c,$(MODULES))))
LIB_CU  := $(wildcard $(addsuffix /*.cu,$(MODULES)))
# `krylov bench`: linked into the command, never into libkrylov.
BENCH_C  := $(filter-out tools/bench/cuda_stubs.c,$(wildcard tools/bench/*.c))
BENCH_CU := $(wildcard tools/bench/*.cu)

ifeq ($(CUDA),1)
  NVCCFLAGS := -O3 -std=c++17 -Iinclude -I. -Xcompiler -fPIC,-Wall,-Wextra,-Werror,-Wno-format-truncation \
               -gencode arch=compute_90,code=sm_90 \
               -gencode arch=compute_90,code=compute_90
  LIB_OBJ := $(LIB_C:%.c=$(BUILD)/%.o) $(LIB_CU:%.cu=$(BUILD)/%.cu.o)
  BENCH_OBJ := $(BENCH_C:%.c=$(BUILD)/%.o) $(BENCH_CU:%.cu=$(BUILD)/%.cu.o)
  LDLIBS  += -L$(CUDA_HOME)/lib64 -Wl,-rpath,$(CUDA_HOME)/lib64 \
             -lcusparse -lcudart_static -ldl -lrt -lpthread -lstdc++
  BENCH_LDLIBS := -lcublas
else
  LIB_OBJ := $(LIB_C:%.c=$(BUILD)/%.o) $(STUBS:%.c=$(BUILD)/%.o)
  BENCH_OBJ := $(BENCH_C:%.c=$(BUILD)/%.o) $(BUILD)/tools/bench/cuda_stubs.o
  BENCH_LDLIBS :=
endif

DRIVER_OBJ := $(patsubst %.c,$(BUILD)/%.o,$(wildcard drivers/*.c))
TEST_SRC   := $(wildcard test/test_*.c)
TEST_BIN   := $(TEST_SRC:test/%.c=$(BUILD)/test/%)
TESTUTIL   := $(patsubst %.c,$(BUILD)/%.o,$(filter-out test/test_%.c,$(wildcard test/*.c)))
EXAMPLES   := $(patsubst examples/%.c,$(BUILD)/examples/%,$(wildcard examples/*.c))
# Check and subunit linked statically so test programs run on machines
# without them (the lent GPU machine).
CHECK_LIBS  = $(patsubst -lsubunit,-l:libsubunit.a,$(shell pkg-config --libs --static check 2>/dev/null))
CHECK_CFLAGS = $(shell pkg-config --cflags check 2>/dev/null)

# libFuzzer targets and their seeds (test/fuzz/); test_fuzz_replay runs
# the same targets on the seeds and on every saved crash, in `make test`.
FUZZ_SRC := $(wildcard test/fuzz/fuzz_*.c)
FUZZ_BIN := $(FUZZ_SRC:test/fuzz/%.c=$(BUILD)/fuzz/%)
FUZZ_SECONDS ?= 20
DRIVER_LIB_OBJ = $(filter-out %/main.o,$(DRIVER_OBJ))

.PHONY: all lib test test-build demo bench format clean deps fuzz fuzz-build
all: $(BUILD)/libkrylov.a $(BUILD)/libkrylov.so $(BUILD)/krylov $(EXAMPLES)
lib: $(BUILD)/libkrylov.a $(BUILD)/libkrylov.so

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -MMD -MP -c $< -o $@

$(BUILD)/drivers/%.o: drivers/%.c
	@mkdir -p $(dir $@)
	$(CC) $(DRIVER_CFLAGS) -MMD -MP -c $< -o $@

$(BUILD)/%.cu.o: %.cu
	@mkdir -p $(dir $@)
	$(NVCC) $(NVCCFLAGS) -MMD -MP -c $< -o $@

$(BUILD)/libkrylov.a: $(LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^

# The shared library exports the functions include/krylov.h declares and
# nothing else (the internals, and the CUDA runtime linked into it, stay
# local): a linker version script made from the header.
$(BUILD)/exports.map: include/krylov.h
	@mkdir -p $(dir $@)
	{ echo '{ global:'; grep -oE '\bkr_[a-z0-9_]+ *\([^*]' $< | \
	    sed 's/ *(.$$/;/' | sort -u; echo 'local: *; };'; } >$@

$(BUILD)/libkrylov.so: $(LIB_OBJ) $(BUILD)/exports.map
	$(CC) -shared -o $@ $(LIB_OBJ) \
	    -Wl,--version-script=$(BUILD)/exports.map $(LDLIBS)

$(BUILD)/krylov: $(DRIVER_OBJ) $(BENCH_OBJ) $(BUILD)/libkrylov.a
	$(CC) -o $@ $(DRIVER_OBJ) $(BENCH_OBJ) $(BUILD)/libkrylov.a \
	    $(BENCH_LDLIBS) $(LDLIBS)

# krylov-petsc, the program behind `krylov compare-petsc`, where PETSc and
# mpicc are installed; libkrylov and build/krylov never link PETSc.
PETSC := $(shell pkg-config --exists PETSc && command -v mpicc >/dev/null && echo 1)
PETSC_OBJ := $(patsubst %.c,$(BUILD)/%.o,$(wildcard drivers/petsc/*.c))
ifeq ($(PETSC),1)
all: $(BUILD)/krylov-petsc
endif

$(BUILD)/drivers/petsc/%.o: drivers/petsc/%.c
	@mkdir -p $(dir $@)
	mpicc $(ALL_CFLAGS) $$(pkg-config --cflags PETSc) -MMD -MP -c $< -o $@

$(BUILD)/krylov-petsc: $(PETSC_OBJ) $(filter-out %/main.o,$(DRIVER_OBJ)) $(BUILD)/libkrylov.a
	mpicc -o $@ $^ $$(pkg-config --libs PETSc) $(LDLIBS)

$(BUILD)/examples/%: examples/%.c $(BUILD)/libkrylov.a
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -o $@ $< $(BUILD)/libkrylov.a $(LDLIBS)

# The replay test calls the fuzz targets, one of which is the option
# parser of the command: it links the command's objects too.
$(BUILD)/test/test_fuzz_replay: TEST_EXTRA = $(DRIVER_LIB_OBJ)
$(BUILD)/test/test_fuzz_replay: $(DRIVER_LIB_OBJ) $(FUZZ_SRC) test/fuzz/fuzz.h

# The allocation-failure sweep wraps the allocator at link time, so the
# library needs no hooks (and, with CUDA, the device pool's allocator).
ALLOCFAIL_WRAP := -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc,--wrap=free \
                  -Wl,--wrap=strdup
ifeq ($(CUDA),1)
  ALLOCFAIL_WRAP += -DKR_TEST_CUDA -Wl,--wrap=cudaMallocFromPoolAsync
endif
$(BUILD)/test/test_allocfail: TEST_EXTRA = $(ALLOCFAIL_WRAP)

$(BUILD)/test/%: test/%.c $(TESTUTIL) $(BUILD)/libkrylov.a
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(CHECK_CFLAGS) -o $@ $< $(TESTUTIL) $(TEST_EXTRA) \
	    $(BUILD)/libkrylov.a $(CHECK_LIBS) $(LDLIBS)

$(BUILD)/fuzz/%: test/fuzz/%.c test/fuzz/fuzz.h $(DRIVER_LIB_OBJ) \
                 $(BUILD)/libkrylov.a
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -DKR_FUZZ_MAIN -fsanitize=fuzzer -o $@ $< \
	    $(DRIVER_LIB_OBJ) $(BUILD)/libkrylov.a $(LDLIBS)

fuzz-build: $(FUZZ_BIN)

# Runs each fuzz target for FUZZ_SECONDS from its seeds (test/fuzz/corpus);
# a crash is saved under test/fuzz/regress/ and fails the run.
fuzz:
	@sh test/deps.sh fuzz
	@$(MAKE) --no-print-directory FUZZ=1 fuzz-build
	@sh test/fuzz/run.sh build-fuzz $(FUZZ_SECONDS)

# Installs Check and zlib when run as root; otherwise says what to install.
deps:
	@sh test/deps.sh

# Builds the test programs without running them (e.g. to carry them to the
# GPU machine, which has no Check: they link it statically).
test-build: all $(TEST_BIN)

test: deps
	@$(MAKE) --no-print-directory test-build
	@sh test/run_tests.sh $(BUILD) $(TEST_BIN)

demo: $(BUILD)/krylov
	$(BUILD)/krylov solve --gen poisson3d:64 --method idr --precond jacobi \
	    --device auto

bench: $(BUILD)/krylov
	sh bench/cpu_bench.sh $(BUILD)

format:
	clang-format -i $$(git ls-files '*.c' '*.h' '*.cu')

clean:
	rm -rf build build-asan build-fuzz

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
