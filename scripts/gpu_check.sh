#!/usr/bin/env bash
# The GPU path, checked on one GPU machine in a few minutes:
#   1. benchmarks/gpu_embed.py: MiniLM fp16 and a BERT-base-sized model, chunks/s and tokens/s at
#      batch sizes 64-1,024, sorted vs unsorted, against this machine's CPU (gpu_embed.json);
#   2. `raychunk run` on samples/ with --device cuda, then with --device cpu;
#   3. the two runs' vectors joined on chunk_id: the same chunks, and min cosine >= 0.999.
# Exits non-zero when a step fails or the vectors differ. Everything goes under $OUT.
#
#   scripts/gpu_check.sh                         # on the GPU machine (after `make setup`)
#   GPU_CHECK_DEVICE=cpu scripts/gpu_check.sh    # the same steps on CPU only: checks the script
#
# Settings (environment): OUT (default out/gpu_check), GPU_CHECK_DEVICE (cuda | cpu, default cuda),
# VENV (default .venv), GPU_EMBED_ARGS (extra gpu_embed.py flags and inputs), MIN_COSINE (default 0.999),
# GPU_CHECK_INPUT (the folder the two runs read, default samples).
set -euo pipefail
cd "$(dirname "$0")/.."

OUT=${OUT:-out/gpu_check}
DEVICE=${GPU_CHECK_DEVICE:-cuda}
VENV=${VENV:-.venv}
MIN_COSINE=${MIN_COSINE:-0.999}
INPUT=${GPU_CHECK_INPUT:-samples}
PY="$VENV/bin/python"
export RAY_AUTH_MODE=disabled HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1

if [[ ! -x "$PY" ]]; then
    echo "gpu_check: no $PY: run \`make setup\` first (or set VENV)" >&2
    exit 2
fi
if [[ "$DEVICE" != cuda && "$DEVICE" != cpu ]]; then
    echo "gpu_check: GPU_CHECK_DEVICE=$DEVICE: expected cuda or cpu" >&2
    exit 2
fi
RAYCHUNK=("$PY" -m raychunk)
[[ -x "$VENV/bin/raychunk" ]] && RAYCHUNK=("$VENV/bin/raychunk")
mkdir -p "$OUT"
start=$SECONDS
step() { echo "== [$((SECONDS - start)) s] $*" | tee -a "$OUT/steps.log" >&2; }

step "environment"
"$PY" - "$DEVICE" <<'EOF' 2>&1 | tee "$OUT/env.txt"
import sys, torch
device = sys.argv[1]
print(f"torch {torch.__version__}, CUDA build {torch.version.cuda}, cuda available {torch.cuda.is_available()}")
if torch.cuda.is_available():
    print(f"GPU: {torch.cuda.get_device_name(0)}, {torch.cuda.get_device_properties(0).total_memory / 2**30:.0f} GiB")
if device == "cuda" and not torch.cuda.is_available():
    sys.exit(
        "gpu_check: torch sees no CUDA device. A +cpu torch wheel (requirements.lock's 2.13.0+cpu) has no "
        "CUDA: install the CUDA build of the same torch version into the venv, or run with GPU_CHECK_DEVICE=cpu"
    )
EOF

step "gpu_embed.py --device $DEVICE"
quick=()
[[ "$DEVICE" == cpu ]] && quick=(--quick)
# shellcheck disable=SC2086  # GPU_EMBED_ARGS is a list of flags
timeout 420 "$PY" benchmarks/gpu_embed.py --device "$DEVICE" "${quick[@]}" --json "$OUT/gpu_embed.json" \
    ${GPU_EMBED_ARGS:-} 2> "$OUT/gpu_embed.log" | tee "$OUT/gpu_embed.txt"

for run in gpu cpu; do
    device=$DEVICE
    [[ $run == cpu ]] && device=cpu
    step "raychunk run --input $INPUT --device $device -> $OUT/$run"
    timeout 300 "${RAYCHUNK[@]}" run --input "$INPUT" --output "$OUT/$run" --device "$device" --overwrite \
        > "$OUT/run_$run.log" 2>&1 || { tail -40 "$OUT/run_$run.log" >&2; exit 1; }
    tail -12 "$OUT/run_$run.log"
done

step "vectors: $OUT/gpu vs $OUT/cpu, min cosine >= $MIN_COSINE"
"$PY" - "$OUT/gpu" "$OUT/cpu" "$MIN_COSINE" "$OUT/compare.json" <<'EOF'
"""Join two runs' chunks on chunk_id and compare their vectors, with plain pyarrow."""
import json
import sys
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

gpu, cpu, min_cos, out = Path(sys.argv[1]), Path(sys.argv[2]), float(sys.argv[3]), Path(sys.argv[4])


def vectors(folder: Path) -> dict[str, np.ndarray]:
    report = json.loads((folder / "report.json").read_text())
    table = pa.concat_tables(
        pq.read_table(folder / f, columns=["chunk_id", "embedding"]) for f in report["files"]["chunks"]
    )
    ids = table.column("chunk_id").to_pylist()
    emb = table.column("embedding").combine_chunks()
    dim = emb.type.list_size
    matrix = emb.flatten().to_numpy(zero_copy_only=False).reshape(-1, dim).astype(np.float64)
    assert len(set(ids)) == len(ids), f"{folder}: duplicate chunk ids"
    return dict(zip(ids, matrix))


a, b = vectors(gpu), vectors(cpu)
only_a, only_b = sorted(a.keys() - b.keys()), sorted(b.keys() - a.keys())
common = sorted(a.keys() & b.keys())
x = np.stack([a[k] for k in common])
y = np.stack([b[k] for k in common])
cos = (x * y).sum(1) / np.linalg.norm(x, axis=1) / np.linalg.norm(y, axis=1)
result = {
    "chunks": {"gpu": len(a), "cpu": len(b), "common": len(common), "only_gpu": len(only_a), "only_cpu": len(only_b)},
    "cosine": {"min": float(cos.min()), "mean": float(cos.mean()), "p01": float(np.quantile(cos, 0.01))},
    "worst": [common[i] for i in np.argsort(cos)[:3]],
    "threshold": min_cos,
}
result["ok"] = bool(not only_a and not only_b and len(common) > 0 and cos.min() >= min_cos)
out.write_text(json.dumps(result, indent=2))
print(
    f"chunks: {len(a)} ({gpu.name}) vs {len(b)} ({cpu.name}), {len(common)} joined on chunk_id, "
    f"{len(only_a)} / {len(only_b)} unmatched"
)
print(f"cosine: min {cos.min():.6f}, 1st percentile {result['cosine']['p01']:.6f}, mean {cos.mean():.6f}")
if not result["ok"]:
    sys.exit(f"gpu_check: FAILED: vectors differ or chunks unmatched (min cosine {cos.min():.6f} < {min_cos})")
print("gpu_check: vectors match")
EOF
step "done: $OUT (gpu_embed.json, compare.json, logs)"
