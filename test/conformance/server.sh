#!/usr/bin/env bash
# Runs the official MCP conformance suite's server scenarios
# (@modelcontextprotocol/conformance, pinned in package.json here)
# against `pml serve` and `pml gateway` on loopback. Builds nothing: pass
# the pml binary; `npm ci` here must have run.
#
# Usage: test/conformance/server.sh PATH_TO_PML_BINARY
#
# Each endpoint runs the scenarios listed for it below, by name: a scenario
# passes when it records at least one SUCCESS check and no FAILURE. A
# scenario a newer suite adds is reported as unclassified and not run, so a
# version bump cannot fail CI before someone has classified it.
set -euo pipefail

pml=${1:?usage: server.sh PATH_TO_PML_BINARY}
pml=$(cd "$(dirname "$pml")" && pwd)/$(basename "$pml")
here=$(cd "$(dirname "$0")" && pwd)
[ -x "$pml" ] || { echo "conformance: $pml is not an executable" >&2; exit 2; }
[ -x "$here/node_modules/.bin/conformance" ] || { echo "conformance: the suite is missing; run npm ci in $here" >&2; exit 2; }
# The suite needs Node 22 or later; the pinned `node` package brings it.
export PATH="$here/node_modules/.bin:$PATH"
conformance=(conformance)

# Both endpoints pass these.
common=(server-initialize ping logging-set-level tools-list resources-list prompts-list dns-rebinding-protection)
serve_scenarios=("${common[@]}" server-sse-multiple-streams)
gateway_scenarios=("${common[@]}")

# Not applicable to either endpoint, with the reason.
declare -A not_applicable=(
  [completion-complete]="completes arguments of the fixture prompt test_prompt_with_arguments; PML has no prompts and declares no completions capability"
  [tools-call-simple-text]="calls the suite's fixture tool test_simple_text"
  [tools-call-image]="calls the fixture tool test_image_content"
  [tools-call-audio]="calls the fixture tool test_audio_content"
  [tools-call-embedded-resource]="calls the fixture tool test_embedded_resource"
  [tools-call-mixed-content]="calls the fixture tool test_multiple_content_types"
  [tools-call-with-logging]="calls the fixture tool test_tool_with_logging"
  [tools-call-error]="calls the fixture tool test_error_handling"
  [tools-call-with-progress]="calls the fixture tool test_tool_with_progress"
  [tools-call-sampling]="calls the fixture tool test_sampling"
  [tools-call-elicitation]="calls the fixture tool test_elicitation"
  [json-schema-2020-12]="looks for the fixture tool json_schema_2020_12_tool"
  [elicitation-sep1034-defaults]="calls the fixture tool test_elicitation_sep1034_defaults"
  [elicitation-sep1330-enums]="calls the fixture tool test_elicitation_sep1330_enums"
  [server-sse-polling]="calls the fixture tool test_reconnection; without it the suite records only warnings"
  [resources-read-text]="reads the fixture resource test://static-text; PML serves no resources"
  [resources-read-binary]="reads the fixture resource test://static-binary; PML serves no resources"
  [resources-templates-read]="reads the fixture template test://template/{id}/data; PML serves no resources"
  [resources-subscribe]="subscribes to the fixture resource test://watched-resource; PML serves no resources"
  [resources-unsubscribe]="unsubscribes from the fixture resource test://watched-resource; PML serves no resources"
  [prompts-get-simple]="gets the fixture prompt test_simple_prompt; PML serves no prompts"
  [prompts-get-with-args]="gets the fixture prompt test_prompt_with_arguments; PML serves no prompts"
  [prompts-get-embedded-resource]="gets the fixture prompt test_prompt_with_embedded_resource; PML serves no prompts"
  [prompts-get-with-image]="gets the fixture prompt test_prompt_with_image; PML serves no prompts"
)
declare -A gateway_not_applicable=(
  [server-sse-multiple-streams]="needs a session; the gateway is stateless (any replica answers any request; session IDs are optional in Streamable HTTP), so the suite records only a warning"
)

tmp=$(mktemp -d)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM # so that EXIT runs cleanup then too

# The children get no PML_ setting of this shell (a gateway URL or key
# would turn `pml serve` into a client of another gateway).
while IFS= read -r name; do unset "$name"; done < <(compgen -e | grep '^PML_' || true)

# wait_for_line FILE REGEX PID: prints the first match of REGEX in FILE,
# failing if PID exits first or 30 s pass.
wait_for_line() {
  local file=$1 re=$2 pid=$3 line
  for _ in $(seq 300); do
    if line=$(grep -oE "$re" "$file" 2>/dev/null | head -n1) && [ -n "$line" ]; then
      echo "$line"
      return 0
    fi
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  echo "conformance: no line matching '$re' in $file:" >&2
  cat "$file" >&2
  return 1
}

# pml serve, without its token: the suite sends no headers, and a proxy
# adding the token would change the port the DNS-rebinding scenario's
# Origin names (the scenario is about servers without authentication).
mkdir -p "$tmp/ws"
(cd "$tmp/ws" && exec env PML_WORKSPACE="$tmp/ws" "$pml" serve --port 0 --no-auth) >"$tmp/serve.log" 2>&1 &
pids+=($!)
serve_url=$(wait_for_line "$tmp/serve.log" 'msg=listening addr=http://127\.0\.0\.1:[0-9]+' "${pids[-1]}")
serve_url="${serve_url#*addr=}/mcp"

# pml gateway with a key, behind a loopback proxy that adds the key.
key=$("$pml" gateway key create --db "$tmp/gateway.db" --org conformance --project ci)
"$pml" gateway --addr 127.0.0.1:0 --metrics-addr off --db "$tmp/gateway.db" >"$tmp/gateway.log" 2>&1 &
pids+=($!)
gateway_url=$(wait_for_line "$tmp/gateway.log" 'msg=listening addr=http://127\.0\.0\.1:[0-9]+' "${pids[-1]}")
PML_CONFORMANCE_KEY=$key node "$here/auth-proxy.mjs" "${gateway_url#*addr=}" >"$tmp/proxy.log" 2>&1 &
pids+=($!)
proxy_url=$(wait_for_line "$tmp/proxy.log" 'listening http://127\.0\.0\.1:[0-9]+' "${pids[-1]}")
proxy_url="${proxy_url#listening }/mcp"

# verdict CHECKS_JSON: prints "pass" or "fail: <reasons>" for one scenario.
verdict() {
  node -e '
    const checks = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
    const by = (s) => checks.filter((c) => c.status === s);
    const bad = by("FAILURE").map((c) => `${c.id}: ${c.errorMessage ?? "failed"}`);
    const warn = by("WARNING").map((c) => `warning ${c.id}: ${c.errorMessage ?? ""}`);
    if (bad.length === 0 && by("SUCCESS").length > 0) console.log(["pass", ...warn].join("; "));
    else console.log(["fail", ...(bad.length ? bad : ["no check succeeded"]), ...warn].join("; "));
  ' "$1"
}

total_pass=0
total_fail=0
# run ENDPOINT URL SCENARIO...
run() {
  local endpoint=$1 url=$2 pass=0 fail=0 s out res
  shift 2
  for s in "$@"; do
    out="$tmp/results/$endpoint/$s"
    mkdir -p "$out"
    timeout 20 "${conformance[@]}" server --url "$url" --scenario "$s" -o "$out" >"$out/cli.log" 2>&1 || true
    if ! res=$(verdict "$out"/*/checks.json 2>&1); then
      res="fail: no results ($(tail -n 3 "$out/cli.log" | tr '\n' ' '))"
    fi
    if [[ $res == pass* ]]; then
      pass=$((pass + 1))
    else
      fail=$((fail + 1))
    fi
    echo "conformance: $endpoint $s: $res"
  done
  echo "conformance: $endpoint: $pass passed, $fail failed of $# applicable"
  total_pass=$((total_pass + pass))
  total_fail=$((total_fail + fail))
}

run "pml-serve" "$serve_url" "${serve_scenarios[@]}"
echo "conformance: pml-serve: ${#not_applicable[@]} not applicable (fixture tools, resources or prompts of the suite's reference server)"
run "pml-gateway" "$proxy_url" "${gateway_scenarios[@]}"
echo "conformance: pml-gateway: $((${#not_applicable[@]} + ${#gateway_not_applicable[@]})) not applicable (as pml-serve, and server-sse-multiple-streams: ${gateway_not_applicable[server-sse-multiple-streams]})"

# Scenarios of the installed suite that this script does not classify.
known=" ${serve_scenarios[*]} ${gateway_scenarios[*]} ${!not_applicable[*]} ${!gateway_not_applicable[*]} "
while read -r _ name _; do
  [[ $known == *" $name "* ]] || echo "conformance: unclassified scenario (not run; classify it in $0): $name"
done < <("${conformance[@]}" list --server | grep '^  - ')

echo "conformance: $total_pass passed, $total_fail failed"
[ "$total_fail" -eq 0 ]
