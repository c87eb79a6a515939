#!/usr/bin/env bash
# Regenerate every committed result, the normalised-score anchors and LEADERBOARD.md
# (run from the repository root after a reference agent changed). About 15 minutes of
# CPU; `search` takes most of it. Results are identical on every backend, so BACKEND
# (default: multiprocessing, 2 workers) only changes the time. Results of memtab-2p and
# memtab-2p-none carry their game records (so the leaderboard audits them); the others
# carry none, to keep the repository small.
set -euo pipefail
BACKEND=${BACKEND:-"--backend multiprocessing --workers 2"}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
run() {  # run TRACK AGENT OUT [extra args]
  local track=$1 agent=$2 out=$3
  shift 3
  # shellcheck disable=SC2086
  nice -n 10 memtab evaluate --agent "$agent" --track "$track" --out "$out" --no-progress $BACKEND "$@" \
    | tail -n 3
}
recs() {  # records option for the committed result of TRACK AGENT
  if [ "$1" = memtab-2p ] || [ "$1" = memtab-2p-none ]; then echo "--records results/$1/$2.records.jsonl.gz"; fi
}
tracks=$(python -c "from memtab_env.protocol import TRACKS; print(*(f'{t.id}:{t.strongest}' for t in TRACKS.values()))")

# 1. the anchor agents (random and each track's strongest), with their records
for ts in $tracks; do
  t=${ts%%:*}; s=${ts##*:}
  for a in random "$s"; do run "$t" "$a" "$TMP/$t/$a.json" --records "$TMP/$t/$a.records.jsonl.gz"; done
done
# 2. their win rates become the anchors of the track table (and BENCHMARK.md)
python results/set_anchors.py "$TMP"
# 3. their results under the new anchors, recomputed from the same records
for ts in $tracks; do
  t=${ts%%:*}; s=${ts##*:}
  for a in random "$s"; do
    # shellcheck disable=SC2046
    run "$t" "$a" "results/$t/$a.json" --from-records "$TMP/$t/$a.records.jsonl.gz" $(recs "$t" "$a")
  done
done
# 4. every other built-in agent
agents_of() { python -c "import agents, sys; print(*agents.available(sys.argv[1]))" "$1"; }
for ts in $tracks; do
  t=${ts%%:*}; s=${ts##*:}
  game=$(python -c "from memtab_env.protocol import TRACKS; print(TRACKS['$t'].game)")
  for a in $(agents_of "$game"); do
    case "$a" in random|"$s"|human|sb3) continue ;; esac
    # an agent that cannot play the track (a shipped policy trained for another number
    # of players) fails with a message that names the reason; it is left out
    # shellcheck disable=SC2046
    if ! run "$t" "$a" "results/$t/$a.json" $(recs "$t" "$a"); then
      echo "left out: $a on $t (see the error above)"
    fi
  done
done
memtab leaderboard
