#!/bin/bash
# Two ssatd builds side by side on one page: both in offload mode with the builtin edge (gzip
# level 1) in front of one nginx origin serving PAGE as identity, loaded in turn with
# `wrk -t1 -cC -dSs` for ROUNDS alternating rounds. Prints per round each build's req/s and
# its own CPU milliseconds per request (utime+stime of the process over the round), the
# figure that is steady on a shared machine. A measuring tool, not a test: loopback only.
# Needs nginx, wrk, curl.
# usage: bench/ab.sh SSATD_A SSATD_B PAGE.html [rounds] [seconds] [connections]
set -u
a=${1:?ssatd binary A}; b=${2:?ssatd binary B}; page=${3:?page}; rounds=${4:-4}; secs=${5:-8}; conns=${6:-16}
for tool in nginx wrk curl; do
  command -v $tool >/dev/null || { echo "needs $tool (apt-get install -y nginx-light wrk curl)"; exit 2; }
done
work=$(mktemp -d); chmod 755 "$work"; pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; for p in "${pids[@]}"; do while kill -0 "$p" 2>/dev/null; do sleep 0.1; done; done; rm -rf "$work"; }
trap cleanup EXIT
. "$(dirname "$0")/lib.sh"
O=18291
mkdir -p "$work/www" "$work/logs"
origin_page "$page" $O
nginx -c "$work/origin.conf" -p "$work" & pids+=($!)
start() { # name binary port admin
  offload_toml "$3" "$4" $O > "$work/$1.toml"
  "$2" serve -config "$work/$1.toml" >/dev/null 2>"$work/logs/$1.log" & pids+=($!)
  wait_ready "$4"
}
start a "$a" 18293 18295; pa=${pids[-1]}
start b "$b" 18294 18296; pb=${pids[-1]}
H=(-H 'Host: www.pub.example' -H 'Accept-Encoding: gzip' -H 'Sec-Fetch-Dest: document' -H 'Accept: text/html')
ticks() { awk '{print $14+$15}' /proc/$1/stat; }
round() { # port pid: "req/s cpu-ms/req"
  local t0 t1 o; t0=$(ticks "$2"); o=$(wrk -t1 -c"$conns" -d"${secs}s" "${H[@]}" "http://127.0.0.1:$1/" 2>&1); t1=$(ticks "$2")
  echo "$o" | awk -v dt=$((t1 - t0)) -v hz="$(getconf CLK_TCK)" '/requests in/ {n=$1} /Requests\/sec/ {r=$2} END { printf "%s %.2f", r, (n>0 ? dt*1000/hz/n : 0) }'; }
echo "A $a: $(curl -s "${H[@]}" -o /dev/null -w '%{http_code} %{size_download} B' http://127.0.0.1:18293/)"
echo "B $b: $(curl -s "${H[@]}" -o /dev/null -w '%{http_code} %{size_download} B' http://127.0.0.1:18294/)"
echo "page $(basename "$page"), c=$conns, ${secs} s rounds; nproc $(nproc); load average $(cut -d' ' -f1-3 /proc/loadavg)"
for i in $(seq "$rounds"); do
  read -r ra ca <<<"$(round 18293 $pa)"; read -r rb cb <<<"$(round 18294 $pb)"
  echo "round $i A=$ra req/s ($ca cpu-ms/req) B=$rb req/s ($cb cpu-ms/req) B/A cpu=$(echo "$cb $ca" | awk '{ if ($2>0) printf "%.2f", $1/$2 }')"
done
