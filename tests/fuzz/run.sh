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
		 fuzz_tokens fuzz_callback fuzz_auth)
secs=${GOBOXD_FUZZ_SECONDS:-60}
out="$build/fuzz"
mkdir -p "$out"
flags=(-g -O1 -fsanitize=fuzzer,address,undefined -D_GNU_SOURCE -I"$top" -I"$build"
       -I/usr/share/include/llhttp -DGOBOXD_SRCDIR="\"$top\"" -DGOBOXD_BUILDDIR="\"$build\"")
libs=$(pkg-config --cflags --libs libcjson yaml-0.1 libzip libcurl)
# the submission store's, for worker/submissions.c (fuzz_tokens)
store_libs=$(pkg-config --cflags --libs sqlite3 libpq)
common=("$top"/common/{buf,strv,utf8,log,util,limits,config,yamlutil,base64,outtext,verdict,auth,sha256,seqlock,cidr}.c
	"$top"/common/lang/{langtab,entry,placeholder,validate}.c "$top"/worker/judge/request.c
	"$top"/worker/http/{json_body,api_run,api_codize}.c)
llhttp=(/usr/share/llhttp/{api,http,llhttp}.c)
# Judge0's parser checks callback_url with libcurl, unpacks additional_files
# with libzip, and reads ?fields= through the HTTP layer
judge0=("$top"/worker/http/{api_judge0,callback,http}.c "$top"/worker/judge/zipfiles.c "${llhttp[@]}")
clang "${flags[@]}" "$top/tests/fuzz/fuzz_http.c" "$top/worker/http/http.c" "$top/common/buf.c" "$top/common/util.c" \
	"${llhttp[@]}" $libs -o "$out/fuzz_http"
for t in fuzz_request fuzz_codize fuzz_langtab; do
	clang "${flags[@]}" "$top/tests/fuzz/$t.c" "${common[@]}" $libs -o "$out/$t"
done
clang "${flags[@]}" "$top/tests/fuzz/fuzz_judge0.c" "${common[@]}" "${judge0[@]}" $libs \
	-o "$out/fuzz_judge0"
clang "${flags[@]}" "$top/tests/fuzz/fuzz_piston.c" "${common[@]}" "$top/worker/http/api_piston.c" \
	"$top/worker/http/api_piston_files.c" "$top/worker/http/semver.c" $libs -o "$out/fuzz_piston"
clang "${flags[@]}" "$top/tests/fuzz/fuzz_zipfiles.c" "$top"/common/{util,log,utf8}.c \
	"$top/common/lang/validate.c" "$top/worker/judge/zipfiles.c" $libs -o "$out/fuzz_zipfiles"
# the token list is split in worker/submissions.c, which links the store,
# the callbacks and Judge0's renderer: built with all of them
# (each source once, whichever of them common holds already)
mapfile -t tokens_src < <(printf '%s\n' "${common[@]}" "${judge0[@]}" "$top/worker/submissions.c" \
	"$top"/common/{store,store_sqlite,store_pg,stats,seqlock,cidr}.c "$top/worker/outbox.c" |
	awk '!seen[$0]++')
clang "${flags[@]}" "$top/tests/fuzz/fuzz_tokens.c" "${tokens_src[@]}" $libs $store_libs -lpthread \
	-o "$out/fuzz_tokens"
clang "${flags[@]}" "$top/tests/fuzz/fuzz_callback.c" "${common[@]}" "$top/worker/http/callback.c" \
	$libs -o "$out/fuzz_callback"
clang "${flags[@]}" "$top/tests/fuzz/fuzz_auth.c" "${common[@]}" $libs -o "$out/fuzz_auth"
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
