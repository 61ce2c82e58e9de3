#!/usr/bin/env bash
# Run on a GPU machine (no Node needed): records the GPU path of gpu_bench.py for real, with the
# vendor tool's view beside it, under $OUT (default ./out). Bounded: about 3 minutes on one GPU.
#   OUT=/tmp/out bash tools/gpu-bench/device-check.sh
# Keep $OUT/profile.json as tools/gpu-bench/fixtures/<gpu>.recorded.profile.json.
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
out="${OUT:-./out}"
mkdir -p "$out"
py="${PYTHON:-python3}"
{
  date -u +%FT%TZ
  nvidia-smi || true
  nvidia-smi --query-gpu=index,uuid,name,memory.total,pci.bus_id,driver_version,compute_cap --format=csv || true
  nvidia-smi topo -m || true
  "$py" -c 'import torch,sys;print(sys.version);print(torch.__version__, torch.version.cuda, torch.cuda.device_count())'
} >"$out/environment.txt" 2>&1
uuids="$(nvidia-smi --query-gpu=index,uuid --format=csv,noheader 2>/dev/null | sed 's/, */=/' | paste -sd, -)"
timeout 240 "$py" -B "$here/gpu_bench.py" --device cuda --max-seconds 180 --uuids "$uuids" \
  >"$out/profile.json" 2>"$out/profile.stderr.txt"
echo "gpu_bench exit $?" >>"$out/environment.txt"
timeout 60 "$py" -B "$here/gpu_bench.py" --device cpu --max-seconds 30 \
  >"$out/cpu-profile.json" 2>"$out/cpu-profile.stderr.txt"
(cd "$here" && "$py" -B -m unittest discover -s . -p 'test_*.py') >"$out/unittest.txt" 2>&1
ls -l "$out"
