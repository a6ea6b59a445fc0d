#!/usr/bin/env bash
# How opencode_main.sql was made (see PROVENANCE.md; not run by the tests): OpenCode 1.18.33
# against the realagents harness's scripted model, 3 prompts (tool calls, an explore sub-agent,
# a large bash result, an auto-compaction from usage_pad, then a write and commit turn).
# RA: the realagents folder; OC: the opencode binary (npm opencode-ai@1.18.33); RG_DIR: a
# directory with an `rg` binary (OpenCode downloads one from GitHub otherwise).
set -euo pipefail
RA=${RA:?realagents folder}
OC=${OC:?opencode binary}
export RA_HOME=${RA_HOME:-/tmp/hop/home} RA_RUNS=${RA_RUNS:-/tmp/hop/runs}
source "$RA/lib.sh"
PORT=${PORT:-18861}
REPO="$RA_PROJECTS/calc-opencode"
R="$RA_RUNS/opencode_main"; rm -rf "$R"; mkdir -p "$R"
"$RA/make_scratch_repo.sh" "$REPO" >/dev/null
RA_PATH="${RG_DIR:+$RG_DIR:}$RA_PATH"
mkdir -p "$XDG_CONFIG_HOME/opencode"
cat > "$XDG_CONFIG_HOME/opencode/opencode.json" <<JSON
{
  "\$schema": "https://opencode.ai/config.json",
  "autoupdate": false,
  "share": "disabled",
  "provider": {
    "fake": {
      "npm": "@ai-sdk/openai-compatible",
      "name": "Fake",
      "options": {"baseURL": "http://127.0.0.1:$PORT/v1", "apiKey": "{env:FAKE_ANTHROPIC_API_KEY}"},
      "models": {"fake-coder": {"name": "Fake Coder", "limit": {"context": 100000, "output": 8000}}}
    }
  },
  "model": "fake/fake-coder",
  "small_model": "fake/fake-coder"
}
JSON
start_server "$PORT" "$RA/scripts/opencode_main.json" "$R/requests.jsonl" --var "REPO=$REPO" --usage-log "$R/usage.jsonl"
trap stop_server EXIT
export FAKE_ANTHROPIC_API_KEY=dummy OPENCODE_DISABLE_MODELS_FETCH=1 OPENCODE_DISABLE_AUTOUPDATE=1 \
  OPENCODE_DISABLE_SHARE=1 OPENCODE_DISABLE_LSP_DOWNLOAD=1 OPENCODE_DISABLE_DEFAULT_PLUGINS=1
oc() { env -i HOME="$HOME" USER="$(id -un)" SHELL=/bin/bash PATH="$RA_PATH" LANG=C.UTF-8 TERM=xterm \
  XDG_CONFIG_HOME="$XDG_CONFIG_HOME" XDG_DATA_HOME="$XDG_DATA_HOME" XDG_CACHE_HOME="$XDG_CACHE_HOME" XDG_STATE_HOME="$XDG_STATE_HOME" \
  FAKE_ANTHROPIC_API_KEY=dummy OPENCODE_DISABLE_MODELS_FETCH=1 OPENCODE_DISABLE_AUTOUPDATE=1 \
  OPENCODE_DISABLE_SHARE=1 OPENCODE_DISABLE_LSP_DOWNLOAD=1 OPENCODE_DISABLE_DEFAULT_PLUGINS=1 \
  timeout 300 "$OC" run --pure --auto --format json "$@" </dev/null; }
cd "$REPO"
oc "The div function in src/calc/ops.py has a TODO about division by zero. Fix it and run the tests." >"$R/1.jsonl" 2>"$R/1.stderr" || echo "rc=$?"
oc --continue "Check the first few hundred lines of server.log and count the ERROR and WARN lines." >"$R/2.jsonl" 2>"$R/2.stderr" || echo "rc=$?"
SID=$(python3 -c 'import json,sys
for l in open(sys.argv[1]):
    d=json.loads(l); s=d.get("sessionID") or (d.get("part") or {}).get("sessionID")
    if s: print(s); break' "$R/1.jsonl")
echo "$SID" > "$R/session_id"
oc --session "$SID" "Make the CLI print a friendly error instead of a traceback, then commit." >"$R/3.jsonl" 2>"$R/3.stderr" || echo "rc=$?"
echo done "$SID"
