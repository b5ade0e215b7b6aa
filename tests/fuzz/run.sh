#!/usr/bin/env bash
# Build the libFuzzer targets with clang (ASan + UBSan) and run each for
# GOBOXD_FUZZ_SECONDS (default 60). Usage: tests/fuzz/run.sh BUILD_DIR [TARGET...]
#
#   fuzz_http      the HTTP layer (llhttp and worker/http/http.c)
#   fuzz_request   both request parsers, /run and /v1/run, on one input
#   fuzz_codize    the /v1/run parser alone, also under tight caps
#   fuzz_langtab   the language loader, the input as one language file
#   fuzz_judge0    Judge0's submission parser, its stored form read back
#                  and shown (the input's first byte: its switches)
#   fuzz_piston    Piston's /api/v2/execute parser, and its semver ranges
#   fuzz_zipfiles  a zip archive unpacked into a job's files (libzip)
#   fuzz_tokens    GET /submissions/batch's token list, against Ruby's split
#   fuzz_callback  a callback's URL, the allowed networks, and the address
#                  rules (metadata never, ::ffff:a.b.c.d as a.b.c.d)
#   fuzz_auth      the tokens file and the check of a request's token
#   fuzz_session   a live session's client messages, both dialects
#
# Each target's corpus grows in BUILD_DIR/fuzz/corpus-TARGET; the seeds are
# tests/fuzz/seeds-TARGET (inputs that once failed among them), and for
# fuzz_langtab also the shipped languages/.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:?usage: tests/fuzz/run.sh BUILD_DIR [TARGET...]}" && pwd)
shift
targets=("$@")
[ ${#targets[@]} -gt 0 ] ||
	targets=(fuzz_http fuzz_request fuzz_codize fuzz_langtab fuzz_judge0 fuzz_piston fuzz_zipfiles
		 fuzz_tokens fuzz_callback fuzz_auth fuzz_session)
secs=${GOBOXD_FUZZ_SECONDS:-60}
out="$build/fuzz"
mkdir -p "$out"
# The fuzzers link goboxd's own library, built a second time with clang,
# instrumented for coverage and with the sanitizers (its own configure,
# under BUILD_DIR/fuzz/lib, made once and kept up to date by make): every
# target sees the code as the daemon runs it, and no list of sources here
# goes stale.
lib="$out/lib"
mkdir -p "$lib"
if [ ! -f "$lib/Makefile" ]; then
	echo "== configuring the instrumented library in $lib"
	(cd "$lib" && "$top/configure" CC=clang \
		CFLAGS="-g -O1 -fsanitize=fuzzer-no-link,address,undefined" >configure.log 2>&1) ||
		{ tail -20 "$lib/configure.log"; exit 1; }
fi
# the sources make makes (BUILT_SOURCES) first: it makes them before all,
# check and install only, not before the library alone
make -C "$lib" --no-print-directory -s worker/http/try_page_files.inc
make -C "$lib" --no-print-directory -s -j"$(nproc)" libgoboxd.la
deps=$(make -C "$lib" --no-print-directory -s print-dep-libs)
flags=(-g -O1 -fsanitize=fuzzer,address,undefined -D_GNU_SOURCE -I"$top" -I"$lib"
       -I/usr/share/include/llhttp -DGOBOXD_SRCDIR="\"$top\"" -DGOBOXD_BUILDDIR="\"$build\"")
for t in fuzz_http fuzz_request fuzz_codize fuzz_langtab fuzz_judge0 fuzz_piston fuzz_zipfiles \
	fuzz_tokens fuzz_callback fuzz_auth fuzz_session; do
	# shellcheck disable=SC2086 # deps is a list of linker flags
	clang "${flags[@]}" "$top/tests/fuzz/$t.c" "$lib/.libs/libgoboxd.a" $deps -lpthread \
		-o "$out/$t"
done
for t in "${targets[@]}"; do
	seeds=("$top/tests/fuzz/seeds-$t")
	max_len=8192
	if [ "$t" = fuzz_langtab ]; then
		# one language file; the shipped ones run to 4.5 KiB
		seeds+=("$top/languages")
		max_len=16384
	fi
	mkdir -p "$out/corpus-$t"
	echo "== $t, ${secs}s"
	rc=0
	# -timeout: one input slower than that is a finding (libFuzzer's own
	# default, 20 minutes, would hold the run long past its budget)
	"$out/$t" -max_total_time="$secs" -timeout=30 -max_len="$max_len" -print_final_stats=1 \
		-artifact_prefix="$out/$t-" "$out/corpus-$t" "${seeds[@]}" >"$out/$t.log" 2>&1 || rc=$?
	grep -E "^(Done|stat::number_of_executed_units|stat::peak_rss_mb)" "$out/$t.log" || true
	# UBSan reports and goes on: what it found would only be in the log
	if grep -qE "runtime error:" "$out/$t.log"; then
		grep -E "runtime error:" "$out/$t.log" | sort -u | sed 's/^/UBSan: /'
		[ "$rc" -ne 0 ] || rc=1
	fi
	echo "corpus: $(find "$out/corpus-$t" -type f | wc -l) inputs; log: $out/$t.log"
	if [ "$rc" -ne 0 ]; then
		tail -60 "$out/$t.log"
		exit "$rc"
	fi
done
