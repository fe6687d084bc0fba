# Helpers of the session-6 device scripts (r6-*.sh; source after setting W, the work folder).
#   say TEXT...             a line to $W/summary.txt (and stdout)
#   suite [SECONDS]         the whole GPU suite (vitest.gpu.config.ts), its summary lines
#   C TAG TIMEOUT ARGS...   vlc compress ARGS ($VLCBIN: another build's bin/vlc.js; $NODE_ARGS: node's flags) -o /dev/shm/TAG.vlc --json -v (under `mpirun -n $NP`
#                           with --distributed when ARGS start with mpirun): stdout to $W/TAG.json,
#                           stderr timestamped to $W/TAG.err; a summary line (rc, wall, total_seconds,
#                           what all phases but reading take, codec, sha256, energies) and the phases;
#                           the output is kept for `same` (KEEP=0: removed)
#   same TAG TAG...         whether the outputs of the first and each other are the same bytes
say() { echo "$*" | tee -a $W/summary.txt; }
suite() {
  timeout ${1:-200} node_modules/.bin/vitest run --config vitest.gpu.config.ts > $W/gpu-suite.log 2>&1
  say "GPU suite rc $?"
  sed 's/\x1b\[[0-9;]*m//g' $W/gpu-suite.log | grep -E "Test Files|Tests |FAIL|×|AssertionError" | head -30 | tee -a $W/summary.txt
}
C() {
  local tag=$1 tmo=$2; shift 2; local o=/dev/shm/$tag.vlc; rm -f $o
  local t=$(date +%s.%N) pre=()
  if [ "$1" = mpirun ]; then shift; pre=(mpirun -n ${NP:-2} --allow-run-as-root --oversubscribe); set -- "$@" --distributed; fi
  timeout $tmo "${pre[@]}" node ${NODE_ARGS:-} ${VLCBIN:-bin/vlc.js} compress "$@" -o $o --json -v > $W/$tag.json 2> >(python3 -u .dev/ts.py > $W/$tag.err)
  local rc=$? wall=$(awk "BEGIN{print $(date +%s.%N) - $t}")
  local sha=$( [ -f $o ] && sha256sum $o | cut -c1-16 || echo none)
  [ "${KEEP:-1}" = 0 ] && rm -f $o
  python3 -c "
import json
try:
  d=json.loads(open('$W/$tag.json').readline()); ph=d['phases']
  print('$tag rc $rc wall %.2f total %.2f all_but_read %.2f codec %s sha %s train_energy %s energy %s' % ($wall, d['total_seconds'], d['total_seconds']-ph['read'], d['codec'], '$sha', d.get('train_energy'), d.get('energy')))
  print('   ', {k: round(v,2) for k,v in ph.items()})
except Exception as e: print('$tag rc $rc wall $wall no json (%s) sha $sha' % e)" | tee -a $W/summary.txt
  [ $rc -eq 0 ] || tail -3 $W/$tag.err | sed 's/^/    ! /' | tee -a $W/summary.txt
}
same() { local a=/dev/shm/$1.vlc; shift; for b in "$@"; do cmp -s $a /dev/shm/$b.vlc && say "  same bytes: $(basename $a .vlc) = $b" || say "  DIFFERENT or missing: $(basename $a .vlc) vs $b"; done; }
