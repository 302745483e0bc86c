#!/usr/bin/env bash
# Builds the demo project's data: a tiny BiGS and a tiny BERT trained on the built-in induction
# task (TASKS.md) until both solve it, a BiGS checkpoint at initialisation (for the kernel-change
# pair), an activation dump of each trained model (the BiGS one with its gates), and the measured
# forward time of both architectures against L (routescope-cli bench forward). Copies
# resources/demo/demo.rsproj beside them as OUT/demo.rsproj: the project names its files relative
# to itself, so it must sit in the directory that holds them. Says on standard error each model's
# held-out accuracy against chance (from the last evaluation in its log.jsonl).
#
#   scripts/make_demo_project.sh [--out DIR] [--steps N] [--examples N] [--cli PATH] [--threads N]
#
# Defaults: --out build/demo, --steps 2000, --examples 256, the CLI build/bin/routescope-cli (or
# $ROUTESCOPE_CLI). --steps N is the training budget: BiGS trains N steps at batch 32; BERT trains
# 3N steps at batch 8 on short contents, then 4.5N steps on the demo's task from those weights
# (below). --examples N is the held-out split (the accuracy's n) and the examples dumped. Finished
# pieces are kept: a second call with the same settings only repeats the accuracy lines; other
# settings rebuild everything. Prints the project's path as its last line.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
out="$root/build/demo"
steps=2000
examples=256
threads=2
cli="${ROUTESCOPE_CLI:-$root/build/bin/routescope-cli}"
while [ $# -gt 0 ]; do
    case "$1" in
        --out) out="$2"; shift 2 ;;
        --steps) steps="$2"; shift 2 ;;
        --examples) examples="$2"; shift 2 ;;
        --threads) threads="$2"; shift 2 ;;
        --cli) cli="$2"; shift 2 ;;
        *) echo "make_demo_project.sh: unknown option $1" >&2; exit 2 ;;
    esac
done
[ -x "$cli" ] || { echo "make_demo_project.sh: no routescope-cli at $cli (build it first)" >&2; exit 2; }
mkdir -p "$out"
out="$(cd "$out" && pwd)"

# The task: induction over 12 symbols with contents of 8..64 tokens, so that accuracy by length
# has several bins. Chance is 1/n_symbols (the answer is one of the symbols).
n_symbols=12
task=(--set data.task=induction --set data.task_params.n_symbols="$n_symbols"
      --set data.task_params.n_valid="$examples" --set model.max_len=128)
full=(--set data.task_params.min_len=8 --set data.task_params.max_len=64)
# What makes each model learn it within the budget (docs/decisions.md, "Demo project: models that
# learn induction"), on the configs' 2-layer, d = 128 models made smaller (d = 64) and without
# dropout; AdamW with weight decay 0.01, clipping at 1, a cosine schedule after a linear warmup.
common=(--set model.d_model=64 --set model.dropout=0 --set train.weight_decay=0.01
        --set train.clip_grad_norm=1.0 --set train.schedule=cosine)
schedule() {  # schedule ARRAY STEPS BATCH WARMUP_PERCENT: fresh examples for every step, 20 evals
    local -n settings="$1"
    local n="$2" batch="$3" warmup="$4"
    settings+=(--set train.warmup_steps="$(( n * warmup / 100 ))"
               --set data.task_params.n_train="$(( n * batch > 1000 ? n * batch : 1000 ))"
               --set train.eval_every="$(( n >= 20 ? n / 20 : 1 ))")
}
# BiGS: init_std 0.3 (its Y_f ⊙ Y_b product starts too small at 0.02, docs/experiments.md) and
# step sizes Δ from [0.1, 1] instead of [0.01, 1] (with one kernel per direction, a layer whose
# kernels all draw a small Δ has no short memory and the model may stay at chance), batch 32,
# lr 3e-3, 10% warmup.
bigs_steps=$steps
bigs=(--set model.init_std=0.3 --set model.ssm.dt_min=0.1 --set train.batch_size=32
      --set train.lr=0.003)
schedule bigs "$bigs_steps" 32 10
# BERT: 3 layers of 4 heads, batch 8 (attention learns induction from many small updates), and a
# first stage on contents of 4..20 tokens: from scratch on 8..64 it stays near chance in this
# budget; after the short stage it generalises to the long contents. lr 1e-3, 5% warmup.
bert_short_steps=$(( 3 * steps ))
bert_steps=$(( 9 * steps / 2 ))
bert=(--set model.n_layers=3 --set model.n_heads=4 --set train.batch_size=8 --set train.lr=0.001)
bert_short=(--set data.task_params.min_len=4 --set data.task_params.max_len=20)
schedule bert_short "$bert_short_steps" 8 5
bert_full=()
schedule bert_full "$bert_steps" 8 5
# The cache key: anything that changes what the files hold.
key="steps=$steps examples=$examples ${task[*]} ${full[*]} ${common[*]} ${bigs[*]} ${bert[*]} \
${bert_short[*]} ${bert_full[*]} $(cat "$root/resources/configs/bigs-tiny.json" \
    "$root/resources/configs/bert-tiny.json" | cksum)"
if [ "$(cat "$out/.demo-settings" 2>/dev/null || true)" != "$key" ]; then
    rm -rf "$out/bigs" "$out/bert" "$out/bert-short" "$out/bigs-init" "$out"/*.dump.h5 \
        "$out/demo.rsproj" "$out/forward-timings.txt"
fi

train() {  # train NAME CONFIG STEPS [--set ...] [--init CHECKPOINT]
    local name="$1" config="$2" n="$3"
    shift 3
    [ -f "$out/$name/model.ckpt.h5" ] && return 0
    echo "demo: training $name ($n steps)…" >&2
    rm -rf "${out:?}/$name"
    "$cli" train --config "$root/resources/configs/$config" --out "$out/$name" --json \
        --threads "$threads" "${task[@]}" "${common[@]}" "$@" --set train.steps="$n" \
        --set train.checkpoint_every="$((n > 0 ? n : 1))" > "$out/$name.train.log"
}
dump() {  # dump NAME [--gates]
    local name="$1"
    shift
    [ -f "$out/$name.dump.h5" ] && return 0
    echo "demo: dumping $name…" >&2
    "$cli" dump --checkpoint "$out/$name/model.ckpt.h5" --out "$out/$name.dump.h5" \
        --examples "$examples" --threads "$threads" "$@" > /dev/null 2> "$out/$name.dump.log"
}
accuracy() {  # accuracy NAME: the last held-out evaluation in the run's log.jsonl, against chance
    local name="$1" record
    record="$(grep '"type":"eval"' "$out/$name/log.jsonl" 2> /dev/null | tail -n 1 || true)"
    echo "$record" | awk -v name="$name" -v symbols="$n_symbols" '{
        acc = ""; n = ""; step = ""
        if (match($0, /"accuracy":[-0-9.eE+]+/)) acc = substr($0, RSTART + 11, RLENGTH - 11)
        if (match($0, /"examples":[0-9]+/)) n = substr($0, RSTART + 11, RLENGTH - 11)
        if (match($0, /"step":[0-9]+/)) step = substr($0, RSTART + 7, RLENGTH - 7)
        if (acc == "") { printf "demo: %s: no held-out evaluation in its log.jsonl\n", name; exit }
        chance = 1 / symbols
        note = acc + 0 > 2 * chance ? "" : " — not clearly above chance"
        printf "demo: %s held-out accuracy %.2f (chance %.2f = 1/%d, n = %d examples, step %d)%s\n",
            name, acc, chance, symbols, n, step, note
    }' >&2
}

train bigs-init bigs-tiny.json 0 "${full[@]}" "${bigs[@]}"
train bigs bigs-tiny.json "$bigs_steps" "${full[@]}" "${bigs[@]}"
train bert-short bert-tiny.json "$bert_short_steps" "${bert[@]}" "${bert_short[@]}"
train bert bert-tiny.json "$bert_steps" "${full[@]}" "${bert[@]}" "${bert_full[@]}" \
    --init "$out/bert-short/model.ckpt.h5"
dump bigs --gates
dump bert
if [ ! -f "$out/forward-timings.txt" ]; then
    # Measured inference time against L for the Efficiency view, at the configs' size (bigs-tiny,
    # bert-tiny: 2 layers, d = 128), as the view's settings in demo.rsproj.
    echo "demo: timing the forward pass…" >&2
    "$cli" bench forward --arch bigs,bert --lengths 128,256,512,1024 --d-model 128 --layers 2 \
        --threads "$threads" --repeats 1 > "$out/forward-timings.txt.tmp" 2> /dev/null
    mv "$out/forward-timings.txt.tmp" "$out/forward-timings.txt"
fi
cp "$root/resources/demo/demo.rsproj" "$out/demo.rsproj"
echo "$key" > "$out/.demo-settings"
accuracy bigs
accuracy bert
echo "$out/demo.rsproj"
