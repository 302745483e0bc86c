#!/usr/bin/env bash
# Builds the demo project's data: a tiny BiGS and a tiny BERT trained on the built-in induction
# task (TASKS.md), a BiGS checkpoint at initialisation (for the kernel-change pair), and an
# activation dump of each trained model (the BiGS one with its gates), and the measured forward
# time of both architectures against L (routescope-cli bench forward). Copies
# resources/demo/demo.rsproj beside them as OUT/demo.rsproj: the project names its files relative
# to itself, so it must sit in the directory that holds them.
#
#   scripts/make_demo_project.sh [--out DIR] [--steps N] [--examples N] [--cli PATH] [--threads N]
#
# Defaults: --out build/demo, --steps 300, --examples 256, the CLI build/bin/routescope-cli (or
# $ROUTESCOPE_CLI). Finished pieces are kept: a second call with the same settings does nothing;
# other settings rebuild everything. Prints the project's path as its last line.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
out="$root/build/demo"
steps=300
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

# Induction with content lengths 16..96, so that accuracy by length has several bins; a small
# vocabulary keeps the task learnable in a few hundred steps.
task=(--set data.task=induction --set data.task_params.min_len=16 --set data.task_params.max_len=96
      --set data.task_params.n_symbols=12 --set data.task_params.n_train=2000
      --set data.task_params.n_valid="$examples" --set model.max_len=128 --set train.eval_every=100)
# The cache key: anything that changes what the files hold.
key="steps=$steps examples=$examples ${task[*]} $(cat "$root/resources/configs/bigs-tiny.json" \
    "$root/resources/configs/bert-tiny.json" | cksum)"
if [ "$(cat "$out/.demo-settings" 2>/dev/null || true)" != "$key" ]; then
    rm -rf "$out/bigs" "$out/bert" "$out/bigs-init" "$out"/*.dump.h5 "$out/demo.rsproj" \
        "$out/forward-timings.txt"
fi

train() {  # train NAME CONFIG STEPS
    local name="$1" config="$2" n="$3"
    [ -f "$out/$name/model.ckpt.h5" ] && return 0
    echo "demo: training $name ($n steps)…" >&2
    rm -rf "${out:?}/$name"
    "$cli" train --config "$root/resources/configs/$config" --out "$out/$name" --json \
        --threads "$threads" "${task[@]}" --set train.steps="$n" \
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

train bigs-init bigs-tiny.json 0
train bigs bigs-tiny.json "$steps"
train bert bert-tiny.json "$steps"
dump bigs --gates
dump bert
if [ ! -f "$out/forward-timings.txt" ]; then
    # Measured inference time against L for the Efficiency view, at the demo models' size.
    echo "demo: timing the forward pass…" >&2
    "$cli" bench forward --arch bigs,bert --lengths 128,256,512,1024 --d-model 128 --layers 2 \
        --threads "$threads" --repeats 1 > "$out/forward-timings.txt.tmp" 2> /dev/null
    mv "$out/forward-timings.txt.tmp" "$out/forward-timings.txt"
fi
cp "$root/resources/demo/demo.rsproj" "$out/demo.rsproj"
echo "$key" > "$out/.demo-settings"
echo "$out/demo.rsproj"
