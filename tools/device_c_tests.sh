#!/usr/bin/env bash
# The C unit tests against XLA's CUDA PJRT plugin, on a machine with an NVIDIA
# GPU and the jax-cuda13-pjrt package (no torch needed: the core is plain C).
#
#   tools/device_c_tests.sh [OUTDIR] [DEADLINE_S]
#
# Builds the core and the test binaries with `make` (no venv), then runs each
# test with both plugin slots pointing at the CUDA plugin, one after the other
# (the plugin preallocates most of the GPU's memory per process), each bounded
# in time, until DEADLINE_S (default 480) is spent. Writes OUTDIR/summary.txt
# and OUTDIR/tests.log (every test's output, one after the other).
set -u
out=${1:-build/device}
deadline=${2:-480}
mkdir -p "$out"
t0=$(date +%s)
py=${PYTHON:-python3}
plug=$($py -c 'import os, jax_plugins.xla_cuda13 as m; print(os.path.join(os.path.dirname(m.__file__), "xla_cuda_plugin.so"))' 2>/dev/null)
if [ -z "$plug" ] || [ ! -f "$plug" ]; then
  echo "no CUDA plugin found (jax-cuda13-pjrt)" | tee "$out/summary.txt"; exit 2
fi
nvidia-smi -L > "$out/gpu.txt" 2>&1
echo "plugin: $plug" | tee "$out/summary.txt"
tests=(test_base_status test_base_env test_base_types test_graph_record
       test_pjrt test_runtime_storage test_runtime_call test_runtime_disk_cache test_lower_linalg_decomp
       test_lower_linalg test_lower_view test_runtime_view_fuzz test_lower_elementwise_unary
       test_lower_elementwise_binary test_lower_reduce test_lower_index test_lower_nn test_lower_conv
       test_lower_norm test_lower_linalg_matmul test_lower_fft test_lower_shape test_lower_create
       test_lower_elementwise_foreach test_lower_loop test_lower_elementwise_complex test_lower_loss
       test_lower_optim test_lower_special test_shlo_builder)
targets="$(printf 'build/tests/%s ' "${tests[@]}") build/fake/.stamp"
# Another gcc may warn where ours does not: the warnings are reported, then the
# tests are built without -Werror so that they still run.
if ! make -s -j"$(nproc)" PY=true $targets > "$out/build.txt" 2>&1; then
  echo "build with -Werror failed (build.txt); building without it" | tee -a "$out/summary.txt"
  grep -E 'error|warning' "$out/build.txt" | head -20
  make -s -j"$(nproc)" PY=true CFLAGS_BASE='-std=c11 -fPIC -g -D_GNU_SOURCE -Wall -Wextra -Wno-unused-parameter' \
    $targets >> "$out/build.txt" 2>&1 || { echo "build failed" | tee -a "$out/summary.txt"; tail -30 "$out/build.txt"; exit 1; }
fi
gcc --version | head -1 >> "$out/summary.txt"
echo "built in $(( $(date +%s) - t0 )) s" | tee -a "$out/summary.txt"
for t in "${tests[@]}"; do
  left=$(( deadline - ($(date +%s) - t0) ))
  if [ "$left" -lt 20 ]; then echo "$t: not run (deadline)" | tee -a "$out/summary.txt"; continue; fi
  lim=$(( left < 150 ? left : 150 ))
  s=$(date +%s)
  TT_TEST_PLUGIN_NEW=$plug TT_TEST_PLUGIN_OLD=$plug TT_TEST_FAKE_DIR=build/fake \
    timeout "$lim" "build/tests/$t" > "$out/one.log" 2>&1
  rc=$?
  fails=$(grep -c 'FAIL' "$out/one.log")
  { echo "=================== $t (rc=$rc)"; cat "$out/one.log"; } >> "$out/tests.log"
  echo "$t: rc=$rc, $(( $(date +%s) - s )) s, FAIL lines: $fails" | tee -a "$out/summary.txt"
done
rm -f "$out/one.log"
