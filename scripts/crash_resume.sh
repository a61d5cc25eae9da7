#!/usr/bin/env bash
# Crash-and-resume check for `autoui run`, with the environment apart from any model: the first N tasks of a suite,
# replayed from their gold actions (`data web --suite` writes both files), run once cleanly; then again with the
# run's own Chromium killed (SIGKILL) after KILL_BROWSER_S seconds and autoui itself SIGKILLed after KILL_AUTOUI_S,
# then resumed with --resume. Prints how many tasks each run finished, the tasks lost, the tasks whose outcome
# differs from the clean run, and the tasks that failed because of the browser kill.
#
# usage: scripts/crash_resume.sh SUITE.jsonl GOLD.jsonl OUT_DIR [N=100]
#   e.g. node dist/src/cli.js data web --out runs/web --episodes 20 --dpr 1 --suite
#        bash scripts/crash_resume.sh runs/web/suite-train.jsonl runs/web/gold-train.jsonl runs/crash 100
set -euo pipefail
SUITE=${1:?suite file}; GOLD=${2:?gold script}; OUT=${3:?output folder}; N=${4:-100}
KILL_BROWSER_S=${KILL_BROWSER_S:-40}; KILL_AUTOUI_S=${KILL_AUTOUI_S:-100}
AUTOUI="node $(dirname "$0")/../dist/src/cli.js"

rm -rf "$OUT" && mkdir -p "$OUT"
# The suite's relative URLs resolve against its own folder, so the cut suite sits beside it.
CUT="$(dirname "$SUITE")/.crash-resume-$(basename "$SUITE")"
head -n "$N" "$SUITE" > "$CUT"
trap 'rm -f "$CUT"' EXIT

echo "clean run of $N tasks…" >&2
$AUTOUI run --suite "$CUT" --script "$GOLD" --out "$OUT/clean" --json > "$OUT/clean.json" 2> "$OUT/clean.err"

echo "crashed run: Chromium killed at ${KILL_BROWSER_S} s, autoui at ${KILL_AUTOUI_S} s…" >&2
$AUTOUI run --suite "$CUT" --script "$GOLD" --out "$OUT/crash" --json > "$OUT/crash1.json" 2> "$OUT/crash1.err" &
PID=$!
sleep "$KILL_BROWSER_S"
echo "browser processes killed: $(pkill -9 -c -P "$PID" chromium || true)" | tee "$OUT/kills.txt" >&2
sleep $((KILL_AUTOUI_S - KILL_BROWSER_S))
kill -9 "$PID" 2> /dev/null && echo "autoui killed" >> "$OUT/kills.txt" || echo "autoui had finished before the kill" >> "$OUT/kills.txt"
wait "$PID" 2> /dev/null || true
echo "results on disk after the kill: $(ls "$OUT/crash/results" | wc -l)" | tee -a "$OUT/kills.txt" >&2

echo "resuming…" >&2
$AUTOUI run --suite "$CUT" --script "$GOLD" --out "$OUT/crash" --resume --json > "$OUT/crash2.json" 2> "$OUT/crash2.err"

node --input-type=module - "$OUT" <<'JS'
import { readFileSync } from 'node:fs';
const out = process.argv[2];
const read = (f) => JSON.parse(readFileSync(`${out}/${f}`, 'utf8'));
const clean = read('clean.json');
const resumed = read('crash2.json');
const byId = (r) => new Map(r.per_task.map((t) => [t.id, t]));
const [c, r] = [byId(clean), byId(resumed)];
const lost = [...c.keys()].filter((id) => !r.has(id));
const differ = [...c.keys()].filter((id) => r.has(id) && r.get(id).success !== c.get(id).success);
const crashed = resumed.per_task.filter((t) => /crash|closed|browser|target/i.test(t.stop_reason)).map((t) => `${t.id} (${t.stop_reason})`);
console.log(JSON.stringify({ tasks: clean.tasks, clean_success_rate: clean.success_rate, resumed_tasks: resumed.tasks, resumed_success_rate: resumed.success_rate, lost, differing_outcomes: differ, failed_by_the_kill: crashed }, null, 2));
JS
