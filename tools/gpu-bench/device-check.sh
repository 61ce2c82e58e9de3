#!/usr/bin/env bash
# Run on a GPU machine (Python and torch, no Node, no network): records the GPU path for real under
# $OUT (default ./out), bounded to about 8 minutes on one GPU, every step under its own timeout:
#   1. detection as the edge runs it: the exact nvidia-smi invocations of
#      services/provider-edge/src/infra/detect/nvidia.backend.ts, plus `-q -x` and provenance;
#   2. gpu_bench.py on CUDA: a real benchmark profile;
#   3. the challenge (ADR 0070) computed by challenge_worker.py as an edge starts it;
#   4. ranks as the process runtime starts them (launch_ranks.py): a 2-rank DDP job over Gloo on CUDA
#      tensors sharing the one GPU, a 1-rank NCCL all-reduce check, a 1-rank DDP job over NCCL.
#   OUT=/tmp/out bash tools/gpu-bench/device-check.sh
# Everything is packed into $OUT/device-check.tar.gz after each step (what came before survives a
# step that hangs); $OUT/device-check.log says what ran, how long, with what exit status.
# DRY_RUN=1 runs it all on a host without a GPU: small sizes, the CPU where a step allows one.
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
out="${OUT:-./out}"
mkdir -p "$out"
out="$(cd "$out" && pwd)"
rec="$out/device-check"
mkdir -p "$rec/detection" "$rec/ranks"
py="$(command -v "${PYTHON:-python3}")"
dry="${DRY_RUN:-0}"
log="$out/device-check.log"
export PYTHONUNBUFFERED=1 PYTHONDONTWRITEBYTECODE=1

pack() { tar -C "$out" -czf "$out/device-check.tar.gz" device-check 2>/dev/null; }
# step NAME SECONDS OUTFILE CMD...: runs CMD under a timeout, stdout to OUTFILE, stderr to
# OUTFILE.stderr.txt; logs its exit status and wall time; never stops the script.
step() {
  local name="$1" limit="$2" file="$3" t0 rc
  shift 3
  t0="$(date +%s%N)"
  timeout --kill-after=5 "$limit" "$@" >"$file" 2>"${file%.*}.stderr.txt"
  rc=$?
  echo "$name exit=$rc ms=$((($(date +%s%N) - t0) / 1000000))" | tee -a "$log"
  pack
}

# --- 1. detection and provenance ---------------------------------------------------------------
det="$rec/detection"
fields=index,uuid,name,memory.total,driver_version,compute_cap,pci.bus_id,utilization.gpu,mig.mode.current
{
  echo "recorded_at=$(date -u +%FT%TZ)"
  echo "host=$(uname -srm)"
  echo "python=$py"
  nvidia-smi --query-gpu=name,driver_version,vbios_version,memory.total --format=csv,noheader 2>&1 | sed 's/^/gpu=/'
} >"$det/provenance.txt"
step smi 20 "$det/nvidia-smi.txt" nvidia-smi
step smi-q-x 30 "$det/nvidia-smi-q.xml" nvidia-smi -q -x
# The edge's own invocations (nvidia.backend.ts), then the variants its parser also reads.
step query 20 "$det/query.csv" nvidia-smi "--query-gpu=$fields" --format=csv
step compute 20 "$det/compute.txt" nvidia-smi -q -d COMPUTE
step list 20 "$det/list.txt" nvidia-smi -L
step topo 20 "$det/topo.txt" nvidia-smi topo -m
step query-nocap 20 "$det/query-without-compute-cap.csv" nvidia-smi "--query-gpu=${fields/compute_cap,/}" --format=csv
step query-noheader 20 "$det/query.noheader-nounits.csv" nvidia-smi "--query-gpu=$fields" --format=csv,noheader,nounits
step torch 60 "$det/torch.txt" "$py" -c 'import sys,torch
print(sys.version); print(torch.__version__, torch.version.cuda, torch.cuda.is_available(), torch.cuda.device_count())
if torch.cuda.is_available(): print(torch.cuda.get_device_name(0), torch.cuda.get_device_properties(0))'
uuid="$(nvidia-smi --query-gpu=uuid --format=csv,noheader 2>/dev/null | head -1 | tr -d ' ')"
echo "uuid=${uuid:-none}" >>"$det/provenance.txt"

# --- 2. the benchmark profile ------------------------------------------------------------------
if [ "$dry" = 1 ]; then
  step gpu-bench 120 "$rec/profile.json" "$py" -B "$here/gpu_bench.py" --device auto --quick --max-seconds 20
else
  step gpu-bench 170 "$rec/profile.json" env CUDA_DEVICE_ORDER=PCI_BUS_ID \
    "$py" -B "$here/gpu_bench.py" --device cuda --max-seconds 130 --uuids "0=$uuid"
fi

# --- 3. the challenge --------------------------------------------------------------------------
ch=(--out "$rec/challenge" --python "$py")
[ -n "$uuid" ] && ch+=(--uuid "$uuid")
[ "$dry" = 1 ] && ch+=(--n 256 --large-n 512)
step challenge 100 "$rec/challenge.jsonl" "$py" -B "$here/device_challenge.py" "${ch[@]}"

# --- 4. ranks as the process runtime starts them -----------------------------------------------
launch=("$py" -B "$here/launch_ranks.py" --cwd "$root" --env OMP_NUM_THREADS=1)
[ -n "$uuid" ] && launch+=(--gpu "$uuid")
ddp="$root/docs/examples/jobs/ddp_train.py"
r="$rec/ranks"
step ddp-gloo-2 100 "$r/ddp-gloo-2.jsonl" "${launch[@]}" --ranks 2 --master-port 29511 --timeout 90 \
  --out "$r/ddp-gloo-2" -- "$py" -B "$ddp" --steps 50 --backend gloo
if [ "$dry" = 1 ]; then
  # No NCCL without a GPU: the same check through Gloo on the CPU, two ranks.
  step allreduce-gloo-2 60 "$r/allreduce-gloo-2.jsonl" "${launch[@]}" --ranks 2 --master-port 29512 \
    --timeout 50 --out "$r/allreduce-gloo-2" -- "$py" -B "$here/nccl_allreduce.py" --backend gloo --sizes 1024,65536
else
  step nccl-1 70 "$r/nccl-1.jsonl" "${launch[@]}" --ranks 1 --master-port 29512 --timeout 60 \
    --out "$r/nccl-1" -- "$py" -B "$here/nccl_allreduce.py" --backend nccl
  step ddp-nccl-1 60 "$r/ddp-nccl-1.jsonl" "${launch[@]}" --ranks 1 --master-port 29513 --timeout 50 \
    --out "$r/ddp-nccl-1" -- "$py" -B "$ddp" --steps 50 --backend nccl
fi
cp "$rec/profile.json" "$out/profile.json" 2>/dev/null
pack
ls -lR "$rec" >>"$log"
