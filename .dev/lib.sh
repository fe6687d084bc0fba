# Helpers the device-run scripts share (source .dev/lib.sh after setting W, the run's work folder,
# and RUN, its name: the results are $OUT/$RUN.tgz, OUT /tmp/out unless set). Sourcing it makes
# both folders and packs the results when the script exits.
#   PEAK_OF   (optional) a pgrep -f pattern, {} standing for the tag: peak then reports the largest
#             VmHWM among the matching processes (timeout and sh wrap the node process, and
#             background peaks run side by side) instead of the command's own;
#   PEAK_POLL seconds between polls (default 0.2).

OUT=${OUT:-/tmp/out}
mkdir -p "$OUT" "$W"
trap pack EXIT

# pack: the work folder as $OUT/$RUN.tgz (again after each step, so a run cut short keeps its results).
pack() { tar czf "$OUT/$RUN.tgz" -C "$W" .; }

# peak TAG CMD...: runs CMD, polling its peak RSS; appends "TAG rc peak_rss_kb wall_s" to $W/peaks.txt.
peak() {
  local tag=$1; shift
  local t0=$(date +%s.%N)
  "$@" &
  local pid=$! hwm=0 h p
  while kill -0 $pid 2>/dev/null; do
    if [ -n "${PEAK_OF:-}" ]; then
      for p in $(pgrep -f "${PEAK_OF//\{\}/$tag}"); do h=$(awk '/VmHWM/{print $2}' /proc/$p/status 2>/dev/null); [ -n "$h" ] && [ "$h" -gt "$hwm" ] && hwm=$h; done
    else
      h=$(awk '/VmHWM/{print $2}' /proc/$pid/status 2>/dev/null); [ -n "$h" ] && hwm=$h
    fi
    sleep "${PEAK_POLL:-0.2}"
  done
  wait $pid; local rc=$?
  echo "$tag rc $rc peak_rss_kb $hwm wall_s $(awk "BEGIN{print $(date +%s.%N) - $t0}")" | tee -a "$W/peaks.txt"
  pack
}

# C TAG ARGS...: vlc compress ARGS --json -v under peak; the JSON in $W/TAG.json, stderr stamped (ts.py) in $W/TAG.err.
C() { local tag=$1; shift; peak $tag node bin/vlc.js compress "$@" --json -v > $W/$tag.json 2> >(python3 -u .dev/ts.py > $W/$tag.err); }

# S TAG [FIELD...]: one line of $W/TAG.json to $W/summary.txt: total seconds, codec, the FIELDs named, phases.
S() {
  local tag=$1; shift
  python3 -c "import json, sys; d=json.loads(open('$W/$tag.json').readline()); print('$tag', round(d['total_seconds'],2), d['codec'], *[d.get(f) for f in sys.argv[1:]], {k: round(v,2) for k,v in d['phases'].items()})" "$@" | tee -a $W/summary.txt
  pack
}
