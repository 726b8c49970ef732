#!/usr/bin/env bash
# ASan/UBSan check (issue #13): build qrt's extension modules with
# -Db_sanitize=address,undefined into a throw-away directory, then run the kernel tests and
# the fuzz corpus with the sanitizer runtimes preloaded into python. Any sanitizer report fails.
#
#   tools/sanitize-check.sh            # uses $PYTHON (default: python3), which must have
#                                      # numpy, meson-python, meson, ninja, cython, pytest,
#                                      # hypothesis (and torch, for the tests that compare to it)
#   QRT_SAN_KEEP=/tmp/qrt-san tools/sanitize-check.sh   # keep (and reuse) the build there
#   QRT_SAN_TESTS="tests/test_quant.py" tools/sanitize-check.sh   # another test selection
#
# Generic on purpose: it only passes meson options through (-Db_sanitize, -Db_lundef=false), so
# it works whatever the C sources and libraries of meson.build are. Exit status: 0 clean,
# 1 a sanitizer report or a failing test, 2 a build problem.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
PY=${PYTHON:-python3}
CC_=${CC:-cc}
WORK=${QRT_SAN_KEEP:-$(mktemp -d /tmp/qrt-san.XXXXXX)}
[ -n "${QRT_SAN_KEEP:-}" ] || trap 'rm -rf "$WORK"' EXIT
mkdir -p "$WORK"
T0=$(date +%s)

libasan=$("$CC_" -print-file-name=libasan.so)
libubsan=$("$CC_" -print-file-name=libubsan.so)
for l in "$libasan" "$libubsan"; do
    if [ ! -e "$l" ]; then
        echo "sanitize-check: $CC_ has no $(basename "$l") (install the compiler's sanitizer runtimes)" >&2
        exit 2
    fi
done

echo "== sanitize-check: building with -Db_sanitize=address,undefined into $WORK"
# Installed into a private --target folder (first on PYTHONPATH): the interpreter's own qrt,
# if any, is shadowed, never touched. -fno-sanitize-recover makes every UBSan finding fatal.
if ! nice "$PY" -m pip install -q --no-build-isolation --no-deps --upgrade \
        --target "$WORK/site" \
        -Cbuild-dir="$WORK/build" \
        -Csetup-args=-Db_sanitize=address,undefined \
        -Csetup-args=-Db_lundef=false \
        "-Csetup-args=-Dc_args=-fno-sanitize-recover=undefined -fno-omit-frame-pointer" \
        . > "$WORK/build.log" 2>&1; then
    tail -40 "$WORK/build.log" >&2
    echo "sanitize-check: build failed (log: $WORK/build.log)" >&2
    exit 2
fi
T1=$(date +%s)
echo "== built in $((T1 - T0)) s"

TESTS=${QRT_SAN_TESTS:-"tests/test_conv1d*.py tests/test_conv2d.py tests/test_pool1d_variants.py tests/test_ops*.py
    tests/test_linear.py tests/test_quant.py tests/test_blob_fuzz.py tests/test_blob_fuzz_struct.py"}
# shellcheck disable=SC2086
TESTS=$(cd "$ROOT" && ls -d $TESTS | sed "s|^|$ROOT/|" | tr '\n' ' ')
LOG="$WORK/tests.log"
rm -f "$WORK"/report.*
set +e
(
    cd "$WORK"   # not the source tree: import qrt from $WORK/site, not from ./qrt
    export PYTHONPATH="$WORK/site${PYTHONPATH:+:$PYTHONPATH}"
    export LD_PRELOAD="$libasan:$libubsan"
    # Reports go to files too: pytest captures fd 2, and a process that aborts takes its
    # captured output with it.
    export ASAN_OPTIONS="detect_leaks=0:abort_on_error=1:halt_on_error=1:allocator_may_return_null=1:handle_segv=1:log_path=$WORK/report"
    export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1:log_path=$WORK/report"
    export PYTHONFAULTHANDLER=1
    "$PY" -c "import qrt, sys; p = qrt.__file__; print('qrt from', p); sys.exit(0 if p.startswith('$WORK/site') else 1)"
    # shellcheck disable=SC2086
    "$PY" -m pytest -q -p no:cacheprovider -rfE ${QRT_SAN_PYTEST_ARGS:-} $TESTS
) 2>&1 | tee "$LOG"
rc=${PIPESTATUS[0]}
set -e
[ "$rc" = 0 ] || rc=1
T2=$(date +%s)
# A report in a child process (the fuzzer runs cases in children) is caught here too.
if ls "$WORK"/report.* > /dev/null 2>&1; then
    for f in "$WORK"/report.*; do echo "---- $f"; head -60 "$f"; done >&2
    rc=1
fi
if grep -qE "ERROR: AddressSanitizer|runtime error:|ERROR: LeakSanitizer|UndefinedBehaviorSanitizer" "$LOG"; then
    echo "sanitize-check: SANITIZER REPORT (see above; log $LOG)" >&2
    rc=1
fi
echo "== sanitize-check: tests in $((T2 - T1)) s, total $((T2 - T0)) s: $([ $rc = 0 ] && echo clean || echo FAILED)"
exit $rc
