#!/usr/bin/env bash
# A second, larger held-out evaluation for a checkpoint trained by `autoui demo`: a fresh built-in
# set with another seed (same generator, so the same task distribution), none of whose screens the
# model saw, scored on its 12.6k training-split screens. The demo's own test split has 1,576
# screens, and its single and google_apps subsets only ~45 and ~90 gold taps, so its click accuracy
# moves by several points between runs that differ by chance alone; this set is 8× larger.
#
#   bash scripts/second_set.sh [CHECKPOINT] [DIR] [SEED]
#     CHECKPOINT  default checkpoints/demo/best (where `autoui demo` leaves it)
#     DIR         where the set and its shards go (reused when present), default runs/second-set
#     SEED        default 7
#   EPISODES, WIDTH, HEIGHT (environment): set size and screen size, default 3000 episodes at 160×320;
#   e.g. `EPISODES=600 WIDTH=216 HEIGHT=480` for phone-shaped (0.45) screens the demo never trains on.
set -euo pipefail
cd "$(dirname "$0")/.."
ckpt=${1:-checkpoints/demo/best}
dir=${2:-runs/second-set}
seed=${3:-7}
cli=(node dist/src/cli.js)
"${cli[@]}" data synth --out "$dir/synth" --episodes "${EPISODES:-3000}" --seed "$seed" --width "${WIDTH:-160}" --height "${HEIGHT:-320}"
for s in general install google_apps single web_shopping; do
  "${cli[@]}" data prepare --input "$dir/synth/$s" --splits "$dir/synth/$s/split.json" --subset "$s" --out "$dir/shards" --json > /dev/null
done
"${cli[@]}" eval --checkpoint "$ckpt" --data "$dir/shards" --split train "${@:4}"
