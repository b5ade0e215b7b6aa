#!/usr/bin/env bash
# goboxd set-up on a Debian 12 host: install what is needed, build, and then
# run the daemon or the whole test suite. Used by README.md, .ci/run and the
# Dockerfile, so that all three take the same path.
#
#   ./setup.sh deps      install the build, test and runtime packages
#   ./setup.sh build-deps  only what building needs (the image's build stage)
#   ./setup.sh build     configure and build into ./build
#   ./setup.sh langs     install every language toolchain named in languages/
#   ./setup.sh install   deps + build + langs
#   ./setup.sh v2-deps   what tests/v2/vm needs: QEMU and Debian 12's kernels
#   ./setup.sh run       install, then start goboxd in the foreground
#   ./setup.sh start     start the built goboxd as run does, installing nothing
#   ./setup.sh test      install, then run every test (unit, sandbox, end-to-end,
#                        and tests/v2/run-tests on cgroup v2 kernels)
set -euo pipefail

top=$(cd "$(dirname "$0")" && pwd)
build="$top/build"
export DEBIAN_FRONTEND=noninteractive

as_root() {
	if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

# Go 1.23 comes from bookworm-backports, which a stock Debian 12 host or
# image does not enable. Its packages are pinned low by the archive itself
# (priority 100), so enabling the suite upgrades nothing else: only
# packages named explicitly come from it.
apt_backports() {
	local list=/etc/apt/sources.list.d/goboxd-backports.sources
	if grep -rqs 'bookworm-backports' /etc/apt/sources.list /etc/apt/sources.list.d/; then
		return
	fi
	as_root tee "$list" >/dev/null <<-SOURCES
		Types: deb
		URIs: http://deb.debian.org/debian
		Suites: bookworm-backports
		Components: main
		Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
	SOURCES
	unset GOBOXD_APT_UPDATED
}

# Run a step quietly; when it fails, say which step and show its output.
quiet() {
	local what=$1 log rc=0
	shift
	log=$(mktemp)
	"$@" >"$log" 2>&1 || rc=$?
	if [ "$rc" -eq 0 ]; then
		rm -f "$log"
		return 0
	fi
	echo "setup.sh: $what failed (exit $rc): $*" >&2
	tail -n 40 "$log" >&2
	rm -f "$log"
	return "$rc"
}

apt_install() {
	# apt-get update once per run; the lists may be missing on a fresh host.
	if [ -z "${GOBOXD_APT_UPDATED:-}" ]; then
		quiet "apt-get update" as_root apt-get update -q
		export GOBOXD_APT_UPDATED=1
	fi
	quiet "installing Debian packages" \
		as_root apt-get install -y -q --no-install-recommends "$@"
}

# What building goboxd needs (the image's build stage installs only this).
build_deps() {
	apt_install \
		build-essential autoconf automake libtool pkg-config \
		libcjson-dev libyaml-dev libcap-dev libsystemd-dev libseccomp-dev \
		libcriterion-dev node-llhttp libsqlite3-dev libpq-dev libzip-dev libcurl4-openssl-dev libwslay-dev
}

deps() {
	build_deps
	apt_install \
		git ca-certificates bubblewrap uidmap slirp4netns iproute2 \
		cppcheck clang-tidy curl python3 python3-pytest python3-pytest-xdist python3-yaml procps wrk \
		chromium chromium-driver python3-selenium \
		haproxy postgresql \
		systemd groff-base
}

# tests/v2/vm boots Debian 12's own kernels (6.1, and 6.12 from its
# security suite) with cgroup v2, on this machine's files.
v2_deps() {
	apt_install qemu-system-x86 busybox-static cpio kmod xz-utils zstd \
		linux-image-amd64 linux-image-6.12-amd64
}

build() {
	cd "$top"
	autoreconf -fi >/dev/null 2>&1 || autoreconf -fi
	mkdir -p "$build"
	cd "$build"
	if [ ! -f Makefile ]; then
		# by its relative path: automake refuses a source dir whose name
		# holds a space (a checkout in "/home/me/my projects")
		../configure -q ${GOBOXD_CONFIGURE_FLAGS:-}
	fi
	make -j"$(nproc)" -s
}

langs() {
	local pkgs npm_pkgs
	# GOBOXD_PACKAGE_LISTS: a directory with the lists goboxd printed
	# (debian, npm), as the image's final stage gets them from its build
	# stage; otherwise this build's goboxd prints them now.
	local lists=${GOBOXD_PACKAGE_LISTS:-}
	list_packages() {
		if [ -n "$lists" ]; then
			cat "$lists/$1"
		else
			"$build/goboxd" --languages-dir "$top/languages" --list-packages="$1"
		fi
	}
	pkgs=$(list_packages debian | sort -u)
	if [ -n "$pkgs" ]; then
		apt_backports
		# shellcheck disable=SC2086
		apt_install $pkgs
	fi
	npm_pkgs=$(list_packages npm | sort -u)
	if [ -n "$npm_pkgs" ]; then
		command -v npm >/dev/null || apt_install npm
		# Installed under /opt/goboxd/npm, which the languages mount read-only.
		# shellcheck disable=SC2086
		quiet "installing npm packages" \
			as_root npm install --no-fund --no-audit -g --prefix /opt/goboxd/npm $npm_pkgs
	fi
	xterm
	# A language's own install step, after every package: languages/NAME.install.sh.
	local hook
	for hook in "$top"/languages/*.install.sh; do
		[ -e "$hook" ] || continue
		echo "setup.sh: $(basename "$hook")"
		quiet "$(basename "$hook")" as_root "$hook"
	done
}

# The try page's terminal (goboxd --try-page): xterm.js from npm, as
# Debian 12's libjs-xterm has no browser build of it; its script and style
# where goboxd reads them (--try-page-xterm-dir's default).
XTERM=@xterm/xterm@5.5.0
xterm() {
	local from=/opt/goboxd/npm/lib/node_modules/@xterm/xterm
	command -v npm >/dev/null || apt_install npm
	quiet "installing $XTERM" \
		as_root npm install --no-fund --no-audit -g --prefix /opt/goboxd/npm "$XTERM"
	as_root install -D -m 0644 "$from/lib/xterm.js" /opt/goboxd/xterm/xterm.js
	as_root install -D -m 0644 "$from/css/xterm.css" /opt/goboxd/xterm/xterm.css
}

# Piston's own client, for tests/e2e/test_piston.py: a client nobody here
# wrote, from npm, into tests/e2e/.npm (ignored by git).
test_deps() {
	command -v npm >/dev/null || apt_install npm
	quiet "installing piston-client" \
		npm install --prefix "$top/tests/e2e/.npm" --no-save --no-fund --no-audit \
		piston-client@1.0.2
}

run() {
	exec "$build/goboxd" --languages-dir "$top/languages" "$@"
}

run_tests() {
	local before status=0
	# what the host's /var/lib, /etc and /run hold before the suite: it
	# must leave nothing new there (tests/host-leftovers)
	before=$(mktemp)
	"$top/tests/host-leftovers" list >"$before"
	cd "$build"
	make -s check-layers
	make -s check-names
	make -s check-doc
	make -s tests/sandbox/sandbox_tests
	make -s check || { cat tests/unit/*.log 2>/dev/null | tail -50; exit 1; }
	make -s verify-units
	make -s verify-deploy
	"$top/tests/run-all" "$build/goboxd" || status=1
	"$top/tests/v2/run-tests" "$build" || status=1
	"$top/tests/host-leftovers" since "$before" || status=1
	rm -f "$before"
	return $status
}

case "${1:-}" in
build-deps) build_deps ;;
deps) deps ;;
v2-deps) v2_deps ;;
build) build ;;
langs) langs ;;
install) deps; build; langs ;;
run) shift; deps; build; langs; run "$@" ;;
start) shift; run "$@" ;;
test) deps; v2_deps; build; langs; test_deps; run_tests ;;
*)
	sed -n '2,15p' "$0"
	exit 2
	;;
esac
