#!/bin/sh
# Install step of languages/go.yaml, run by `setup.sh langs` after the
# packages: a build cache of the standard library and golang.org/x/text.
#
# Since Go 1.20 the standard library ships as source only, so a build with
# an empty cache compiles runtime, fmt and the rest first: 14 s for hello
# world on a 2-core host, against 0.7 to 1 s in the jail with this cache. Each build step
# gets a fresh /tmp, so the cache is built once here, mounted read-only,
# and mirrored into the step's GOCACHE as symbolic links (go.yaml).
#
# The environment must be the build step's (go.yaml), module mode and the
# go.mod's requirements included: the cache keys include CGO_ENABLED, the
# source paths of the packages (x/text's replacement directory) and the
# toolchain itself, so run this again (./setup.sh langs) after the Go
# package is upgraded; until then builds are correct but slow.
set -eu

go=/usr/lib/go-1.23/bin/go
cache=/opt/goboxd/go-cache
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

mkdir "$work/sandbox"
cat >"$work/sandbox/go.mod" <<-'EOF'
	module sandbox

	go 1.23

	require golang.org/x/text v0.7.0 // indirect

	replace golang.org/x/text => /usr/share/gocode/src/golang.org/x/text
EOF
(cd "$work/sandbox" && env -i PATH=/usr/bin:/bin HOME="$work" TMPDIR="$work" LANG=C.UTF-8 \
	GOCACHE="$work/cache" GOPATH="$work/gopath" GOPROXY=off GOTOOLCHAIN=local \
	CGO_ENABLED=0 GOFLAGS=-buildvcs=false GOTELEMETRY=off \
	"$go" build std golang.org/x/text/...)
chmod -R a+rX,go-w "$work/cache"
mkdir -p "$(dirname "$cache")"
rm -rf "$cache.old"
if [ -d "$cache" ]; then mv "$cache" "$cache.old"; fi
mv "$work/cache" "$cache"
rm -rf "$cache.old"
