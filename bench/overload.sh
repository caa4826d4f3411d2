#!/bin/bash
# Overload on one page: wrk at C connections for S seconds against ssatd in offload mode with
# the builtin edge (gzip level 1), an nginx origin serving PAGE as identity. Prints wrk's
# summary, then from ssatd's access log the count of 200s and 503s and the p50/p99 of the
# 200s' total_ms, and ssatd's peak RSS (VmHWM). A measuring tool, not a test: loopback only,
# bounded in time, figures are noisy on a shared machine. Needs nginx, wrk, curl, python3.
# usage: bench/overload.sh SSATD_BINARY PAGE.html [seconds] [connections] [server-toml-lines]
#   e.g. bench/overload.sh ./ssatd /path/to/corpus/yahoo-3.html 10 256 'max_concurrent_pages = 32'
# OVERLOAD_KEEP=DIR keeps ssatd's log (the access lines) and its configuration in DIR.
set -u
bin=${1:?ssatd binary}; page=${2:?page}; secs=${3:-10}; conns=${4:-256}; extra=${5:-}
for tool in nginx wrk curl python3; do
  command -v $tool >/dev/null || { echo "needs $tool (apt-get install -y nginx-light wrk curl python3)"; exit 2; }
done
work=$(mktemp -d); chmod 755 "$work"; pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; for p in "${pids[@]}"; do while kill -0 "$p" 2>/dev/null; do sleep 0.1; done; done
  [ -n "${OVERLOAD_KEEP:-}" ] && mkdir -p "$OVERLOAD_KEEP" && cp "$work/logs/ssatd.log" "$work/ssatd.toml" "$OVERLOAD_KEEP/"; rm -rf "$work"; }
trap cleanup EXIT
. "$(dirname "$0")/lib.sh"
O=18191 S=18193 A=18195
mkdir -p "$work/www" "$work/logs"
origin_page "$page" $O
offload_toml $S $A $O "$extra" > "$work/ssatd.toml"
nginx -c "$work/origin.conf" -p "$work" & pids+=($!)
"$bin" serve -config "$work/ssatd.toml" >/dev/null 2>"$work/logs/ssatd.log" & pid=$!; pids+=($pid)
wait_ready $A
H=(-H 'Host: www.pub.example' -H 'Accept-Encoding: gzip' -H 'Sec-Fetch-Dest: document' -H 'Accept: text/html')
echo "page $(basename "$page"): $(wc -c < "$work/www/index.html") B identity; one request: $(curl -s "${H[@]}" -o /dev/null -w '%{http_code} %{size_download} B' "http://127.0.0.1:$S/")"
echo "server: ${extra:-defaults}; nproc $(nproc); load average $(cut -d' ' -f1-3 /proc/loadavg)"
wrk -t2 -c"$conns" -d"${secs}s" --timeout 2s --latency "${H[@]}" "http://127.0.0.1:$S/"
echo "ssatd peak RSS (VmHWM): $(awk '/VmHWM/ {printf "%.1f MiB", $2/1024}' /proc/$pid/status)"
python3 - "$work/logs/ssatd.log" <<'PY'
import json, sys, collections
st, ms = collections.Counter(), []
for line in open(sys.argv[1]):
    try: r = json.loads(line)
    except ValueError: continue
    if r.get("msg") != "access": continue
    st[r["status"]] += 1
    if r["status"] == 200 and r.get("outcome") == "ok": ms.append(r["total_ms"])
ms.sort()
q = lambda p: ms[min(len(ms) - 1, int(p * len(ms)))] if ms else float("nan")
print("access log: status counts", dict(sorted(st.items())), "reasons",
      dict(collections.Counter(json.loads(l).get("reason") for l in open(sys.argv[1]) if '"access"' in l)))
print("access log: 200 ok total_ms p50 %.0f p99 %.0f max %.0f (n=%d)" % (q(.5), q(.99), ms[-1] if ms else float("nan"), len(ms)))
PY
