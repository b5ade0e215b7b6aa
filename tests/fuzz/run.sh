#!/usr/bin/env bash
# Build the libFuzzer targets with clang (ASan + UBSan) and run each for
# GOBOXD_FUZZ_SECONDS (default 60). Usage: tests/fuzz/run.sh BUILD_DIR
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:?usage: tests/fuzz/run.sh BUILD_DIR}" && pwd)
secs=${GOBOXD_FUZZ_SECONDS:-60}
out="$build/fuzz"
mkdir -p "$out"
flags=(-g -O1 -fsanitize=fuzzer,address,undefined -D_GNU_SOURCE -I"$top" -I"$build"
       -I/usr/share/include/llhttp -DGOBOXD_SRCDIR="\"$top\"")
libs=$(pkg-config --cflags --libs libcjson yaml-0.1)
common=("$top"/common/{buf,log,util,limits,config,yamlutil,langtab,placeholder,validate,base64,request}.c)
clang "${flags[@]}" "$top/tests/fuzz/fuzz_http.c" "$top/worker/http.c" "$top/common/buf.c" \
	/usr/share/llhttp/{api,http,llhttp}.c $libs -o "$out/fuzz_http"
clang "${flags[@]}" "$top/tests/fuzz/fuzz_request.c" "${common[@]}" $libs -o "$out/fuzz_request"
for t in fuzz_http fuzz_request; do
	mkdir -p "$out/corpus-$t"
	echo "== $t, ${secs}s"
	"$out/$t" -max_total_time="$secs" -max_len=8192 "$out/corpus-$t" \
		"$top/tests/fuzz/seeds-$t" 2>&1 | tail -3
done
