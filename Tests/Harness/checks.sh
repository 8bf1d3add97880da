# What the shell suites share (Tests/Dist, Tests/Install): the repository, make, one PASS or FAIL line a check and
# the closing count. Sourced after setting `suite`, the name the last line gives: `SUITE: N passed, M failed`.

repository=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
make=${MAKE:-make}
passed=0
failed=0

pass() { echo "PASS $1"; passed=$((passed + 1)); }
fail() { echo "FAIL $1"; failed=$((failed + 1)); }
# Ends the suite with its count, non-zero when a check failed.
finish() {
    echo "$suite: $passed passed, $failed failed"
    [ "$failed" -eq 0 ]
    exit
}
# make_or_finish LOG ARGUMENTS...: make ARGUMENTS in the repository, its output in LOG; when it fails, its last lines
# and a FAIL line, and the suite ends.
make_or_finish() {
    local log=$1
    shift
    if ! "$make" -C "$repository" --no-print-directory "$@" >"$log" 2>&1; then
        tail -5 "$log"
        fail "make $* failed (last lines above)"
        finish
    fi
}
