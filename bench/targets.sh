#!/bin/bash
# Every row of BENCHMARKS.md's Targets table from one run: P1a (BenchmarkCorpus ratio), P1b,
# P2 and P3 (BenchmarkCodecFloor and `ssatd measure` totals), P4, P4c and P5 (peer-bench.sh
# against nginx on yahoo-3) and P5b (bench/overload.sh at c=256). Raw outputs stay in one
# directory; the table at the end gives each figure (median, range over rounds), its target
# and met/missed. A measuring tool, not a test: never run in CI; figures on a shared machine
# are provisional, so the load average is recorded beside every piece.
#
# usage: bench/targets.sh [-o DIR] [-p PEER_BENCH] [-n ROUNDS] [-only PIECES] CORPUS_DIR
#        bench/targets.sh -summary DIR        print the table again from a run's directory
#   -o DIR          raw outputs (default /tmp/ssatd-targets-<UTC time>)
#   -p PEER_BENCH   path of peer-bench.sh (outside the repository); without it the peer
#                   pieces are left out
#   -n ROUNDS       peer-bench runs (3 rounds of c=16 each) and overload runs (default 3)
#   -only PIECES    comma-separated, of: p1a floor measure peer profile p5b
#                   (default: all; peer and profile only with -p)
#     p1a      BenchmarkCorpus/impl=ratio, -benchtime 25x -count 6             ~1 min
#     floor    BenchmarkCodecFloor, -benchtime 6x -count 6 (P1b, P2, P3)        ~1 min
#     measure  ssatd measure -runs 5 -format json (P1b, P2 totals)              ~1 min
#     peer     peer-bench.sh PROJECT yahoo-3 8 16, ROUNDS times (P4, P4c, P5)   ~2 min each
#     profile  one more peer-bench run, with `perf record` on ssatd offload during its
#              c=16 rounds (figures of that run are not counted)                 ~2 min
#     p5b      bench/overload.sh ssatd yahoo-3 10 256, ROUNDS times             ~15 s each
# Needs go, python3; peer, profile and p5b need nginx, wrk, curl
# (apt-get install -y nginx-light wrk curl); profile needs perf (linux-perf).
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
out="" peer="" rounds=3 only="" summary_only=0
while [ $# -gt 0 ]; do
  case $1 in
    -o) out=$2; shift 2 ;;
    -p) peer=$2; shift 2 ;;
    -n) rounds=$2; shift 2 ;;
    -only) only=$2; shift 2 ;;
    -summary) out=$2; summary_only=1; shift 2 ;;
    -h|--help) sed -n '2,/^set -u/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    -*) echo "unknown flag $1 (see -h)" >&2; exit 2 ;;
    *) break ;;
  esac
done

summarize() { python3 - "$1" <<'PY'
import glob, json, os, re, statistics, sys
d = sys.argv[1]
def read(name):
    p = os.path.join(d, name)
    return open(p, errors="replace").read() if os.path.exists(p) else None
def bench_metric(text, bench, unit):
    vals = []
    for line in (text or "").splitlines():
        if not line.startswith(bench):
            continue
        m = re.search(r"([0-9.e+-]+) " + re.escape(unit) + r"(\s|$)", line)
        if m:
            vals.append(float(m.group(1)))
    return vals
rows = []
def row(num, what, vals, target, fmt, better, note=""):
    """better: 'le' or 'ge'; vals: figures over rounds (median compared)."""
    if not vals:
        rows.append((num, what, "not run", target_s(target, better, fmt), "", note)); return
    med = statistics.median(vals)
    fig = fmt.format(med)
    if len(vals) > 1:
        fig += " (" + fmt.format(min(vals)) + "–" + fmt.format(max(vals)) + ", n=%d)" % len(vals)
    ok = med <= target if better == "le" else med >= target
    rows.append((num, what, fig, target_s(target, better, fmt), "met" if ok else "missed", note))
def target_s(t, better, fmt):
    return ("≤ " if better == "le" else "≥ ") + fmt.format(t)

p1a = read("p1a.txt"); floor = read("floor.txt")
row("P1a", "rewrite / scan, BenchmarkCorpus/impl=ratio", bench_metric(p1a, "BenchmarkCorpus/impl=ratio", "rewrite/scan"), 3.5, "{:.2f}×", "le")
fscan = bench_metric(floor, "BenchmarkCodecFloor", "scan-cpu-ms")
row("P1b", "Transform identity / bare '<' scan, BenchmarkCodecFloor", bench_metric(floor, "BenchmarkCodecFloor", "identity/scan"), 4, "{:.2f}×", "le")
m = None
if read("measure.json"):
    try:
        m = json.loads(read("measure.json"))
    except ValueError:
        m = None
tot = {}
if m:
    for p in m.get("pages", []):
        for mode, v in p.get("modes", {}).items():
            tot[mode] = tot.get(mode, 0) + v.get("cpu_ms", 0)
if tot and fscan:
    row("P1b", "ssatd measure identity total / the floor's scan", [tot["identity"] / statistics.median(fscan)], 4, "{:.2f}×", "le",
        "measure %.1f ms, scan %.2f ms per corpus" % (tot["identity"], statistics.median(fscan)))
row("P2", "identity / gzip_mirror, BenchmarkCodecFloor", bench_metric(floor, "BenchmarkCodecFloor", "identity/gzip_mirror"), 0.08, "{:.3f}", "le")
if tot:
    row("P2", "identity / gzip_mirror, ssatd measure totals", [tot["identity"] / tot["gzip_mirror"]], 0.08, "{:.3f}", "le",
        "totals %.1f / %.1f ms" % (tot["identity"], tot["gzip_mirror"]))
row("P3", "gzip_mirror / bare codecs, BenchmarkCodecFloor", bench_metric(floor, "BenchmarkCodecFloor", "gzip_mirror/bare_codecs"), 1.10, "{:.2f}×", "le")

rr, cr, rss_off, rss_mir, nsum, ssum = [], [], [], [], 0.0, 0.0
for f in sorted(glob.glob(os.path.join(d, "peer-[0-9]*.txt"))):
    for line in open(f, errors="replace"):
        r = re.search(r"nginx=([0-9.]+) \(([0-9.]+) cpu-ms/req\) ssatd_offload=([0-9.]+) \(([0-9.]+)\)", line)
        if r:
            n, nc, s, sc = map(float, r.groups())
            if n > 0: rr.append(s / n); nsum += n; ssum += s
            if nc > 0: cr.append(sc / nc)
        r = re.search(r"c=64 (offload|mirror): .*peak RSS ([0-9.]+) MB", line)
        if r:
            (rss_off if r.group(1) == "offload" else rss_mir).append(float(r.group(2)))
row("P4", "offload / nginx req/s, c=16, per round", rr, 1.5, "{:.2f}×", "ge",
    "summed over rounds %.2f×" % (ssum / nsum) if nsum else "")
row("P4c", "ssatd offload / nginx CPU per request, per round", cr, 0.67, "{:.2f}", "le")
row("P5", "c=64 peak RSS, offload (MB)", rss_off, 64, "{:.0f}", "le")
row("P5", "c=64 peak RSS, mirror (MB)", rss_mir, 128, "{:.0f}", "le")

def seconds(v, unit):
    return float(v) * {"us": 1e-6, "ms": 1e-3, "s": 1, "m": 60}[unit]
to, wmax, p99, rss, bad, counts = [], [], [], [], [], []
for f in sorted(glob.glob(os.path.join(d, "p5b-[0-9]*.txt"))):
    t = open(f, errors="replace").read()
    r = re.search(r"Socket errors:.*timeout (\d+)", t)
    to.append(float(r.group(1)) if r else 0.0)
    r = re.search(r"Latency\s+\S+\s+\S+\s+([0-9.]+)(us|ms|s|m)\s", t)
    if r: wmax.append(seconds(*r.groups()))
    r = re.search(r"200 ok total_ms p50 \S+ p99 ([0-9.]+)", t)
    if r: p99.append(float(r.group(1)) / 1000)
    r = re.search(r"peak RSS \(VmHWM\): ([0-9.]+) MiB", t)
    if r: rss.append(float(r.group(1)) * 1.048576)
    r = re.search(r"status counts (\{[^}]*\})", t)
    if r:
        st = {int(k): int(v) for k, v in re.findall(r"(\d+): (\d+)", r.group(1))}
        # status 0: the client left before an answer (wrk's timeout, or wrk stopping)
        bad.append(float(sum(v for k, v in st.items() if k not in (0, 200, 503))))
        counts.append("%d×200 %d×503" % (st.get(200, 0), st.get(503, 0)))
row("P5b", "c=256: wrk timeouts at 2 s", to, 0, "{:.0f}", "le")
row("P5b", "c=256: slowest answer seen by wrk (s)", wmax, 2, "{:.2f}", "le")
row("P5b", "c=256: answers other than 200 and 503", bad, 0, "{:.0f}", "le", "; ".join(counts))
row("P5b", "c=256: p99 of the completed 200s (s, access log)", p99, 1, "{:.2f}", "le")
row("P5b", "c=256: peak RSS (MB)", rss, 128, "{:.0f}", "le")

env = read("env.txt") or ""
print("## Targets (%s)\n" % d)
for line in env.splitlines():
    print("    " + line)
print("\n| # | figure | median (range, rounds) | target | | |\n|---|---|---|---|---|---|")
for r in rows:
    print("| %s | %s | %s | %s | %s | %s |" % r)
PY
}

if [ $summary_only = 1 ]; then summarize "$out"; exit; fi
corpus=${1:?corpus directory (see -h)}
corpus=$(cd "$corpus" && pwd)
[ -n "$out" ] || out=/tmp/ssatd-targets-$(date -u +%Y%m%dT%H%M%SZ)
mkdir -p "$out"; out=$(cd "$out" && pwd)
[ -n "$only" ] || { only="p1a,floor,measure,p5b"; [ -n "$peer" ] && only="$only,peer,profile"; }
want() { case ",$only," in *",$1,"*) return 0 ;; esac; return 1; }
page=$corpus/yahoo-3.html
cd "$root" || exit 2
load() { echo "$1: $(date -u +%H:%M:%S) load average $(cut -d' ' -f1-3 /proc/loadavg)" >> "$out/env.txt"; }
{
  echo "commit $(git -C "$root" rev-parse --short HEAD)$(git -C "$root" diff --quiet HEAD || echo ' (with uncommitted changes)'); $(go version | cut -d' ' -f3-)"
  echo "machine: $(nproc) × $(sed -n 's/^model name\s*: //p' /proc/cpuinfo | head -1); $(awk '/MemTotal/ {printf "%.1f GiB", $2/1048576}' /proc/meminfo)"
} > "$out/env.txt"
echo "raw outputs in $out"
export SSATD_CORPUS=$corpus
if want p1a; then
  load p1a; echo "p1a: BenchmarkCorpus/impl=ratio"
  go test -run '^$' -bench 'BenchmarkCorpus/impl=ratio$' -benchtime 25x -count 6 ./internal/rewrite/ > "$out/p1a.txt" 2>&1 || echo "  p1a failed: see $out/p1a.txt"
fi
if want floor; then
  load floor; echo "floor: BenchmarkCodecFloor"
  go test -run '^$' -bench BenchmarkCodecFloor -benchtime 6x -count 6 ./internal/proxy/ > "$out/floor.txt" 2>&1 || echo "  floor failed: see $out/floor.txt"
fi
if want measure || want p5b; then
  go build -o "$out/ssatd" ./cmd/ssatd || exit 1
fi
if want measure; then
  load measure; echo "measure: ssatd measure -runs 5"
  "$out/ssatd" measure -pages "$corpus" -runs 5 -format json -out "$out/measure.json" > "$out/measure.txt" 2>&1 || echo "  measure failed: see $out/measure.txt"
fi
if want peer || want profile; then
  [ -x "$peer" ] || { echo "peer-bench not found or not executable: '${peer}' (-p)"; exit 2; }
fi
if want peer; then
  for i in $(seq "$rounds"); do
    load "peer $i"; echo "peer $i/$rounds: peer-bench.sh yahoo-3, 8 s rounds, c=16"
    "$peer" "$root" "$page" 8 16 > "$out/peer-$i.txt" 2>&1
  done
fi
if want profile; then
  command -v perf >/dev/null || { echo "profile needs perf (apt-get install -y linux-perf)"; exit 2; }
  load profile; echo "profile: peer-bench with perf record on ssatd offload during its c=16 rounds"
  "$peer" "$root" "$page" 8 16 > "$out/peer-profiled.txt" 2>&1 & pb=$!
  # ssatd offload is a child of this peer-bench; its c=16 rounds are over at "round 3".
  until grep -q 'ssatd offload bytes' "$out/peer-profiled.txt" 2>/dev/null || ! kill -0 $pb 2>/dev/null; do sleep 0.2; done
  spid=$(pgrep -P $pb -f 'offload\.toml' | head -1)
  if [ -n "$spid" ]; then
    perf record -F 499 -g -p "$spid" -o "$out/perf-offload.data" > "$out/perf-record.txt" 2>&1 & pf=$!
    until grep -q '^round 3' "$out/peer-profiled.txt" 2>/dev/null || ! kill -0 $pb 2>/dev/null; do sleep 0.2; done
    kill -INT $pf; wait $pf
    # now, while the binary still exists (peer-bench deletes it at its end)
    perf report -i "$out/perf-offload.data" --stdio --no-children --sort symbol --percent-limit 0.7 2>/dev/null | grep -v '^$' | head -150 > "$out/perf-offload-self.txt"
    perf report -i "$out/perf-offload.data" --stdio --children --sort symbol -g none --percent-limit 3 2>/dev/null | grep -v '^$' | head -120 > "$out/perf-offload-cum.txt"
  else
    echo "  no ssatd offload under peer-bench $pb"
  fi
  wait $pb
fi
if want p5b; then
  for i in $(seq "$rounds"); do
    load "p5b $i"; echo "p5b $i/$rounds: overload.sh yahoo-3 10 s c=256"
    OVERLOAD_KEEP="$out/p5b-$i" "$root/bench/overload.sh" "$out/ssatd" "$page" 10 256 > "$out/p5b-$i.txt" 2>&1
  done
fi
load end
summarize "$out" | tee "$out/targets.md"
