# goboxd with both jail drivers: nsjail built from the pinned submodule
# (nsjail/upstream, tag 3.4) and bubblewrap from Debian, and every language
# in languages/.
#
# Build with `make image` in build/ (tests/image/build: podman or docker,
# a local debian:12 base where none can be pulled, and the nsjail source
# from NSJAIL_SRC where the submodule is not checked out), or by hand from a
# context holding the submodule (git submodule update --init --recursive).
# Run: docker run --privileged --cgroupns=private -p 8080:8080 goboxd
# (or not privileged: deploy/kubernetes-unprivileged says what it needs).
#
# Three stages: nsjail and goboxd are built in their own stages, and the
# final one gets their binaries, the runtime libraries and the languages'
# toolchains only: no autotools, headers or test tools.

FROM debian:12 AS nsjail
RUN apt-get update -qq \
 && apt-get install -y -qq --no-install-recommends \
      g++ make pkg-config bison flex protobuf-compiler libprotobuf-dev \
      libnl-route-3-dev \
 && rm -rf /var/lib/apt/lists/*
COPY nsjail/upstream /src/nsjail
RUN test -f /src/nsjail/Makefile -a -f /src/nsjail/kafel/Makefile \
      || { echo "nsjail/upstream is empty: run 'git submodule update --init --recursive'" >&2; exit 1; } \
 && make -C /src/nsjail -j"$(nproc)" \
 && install -m 0755 /src/nsjail/nsjail /usr/local/bin/nsjail

FROM debian:12 AS build
WORKDIR /src
COPY . .
# The same script as on a host: only what building needs, then the build,
# and the packages the languages need as goboxd lists them.
RUN ./setup.sh build-deps \
 && ./setup.sh build \
 && make -C build -s install DESTDIR=/out \
 && mkdir /packages \
 && for kind in debian npm; do \
      build/goboxd --languages-dir /src/languages --list-packages=$kind > /packages/$kind \
        || exit 1; \
    done

FROM debian:12
# Runtime libraries of goboxd and nsjail, bubblewrap, slirp4netns for a
# job's network (goboxd --network), curl for the health
# check, and for a container that is not privileged
# (deploy/kubernetes-unprivileged): uidmap, and root's subordinate range,
# ids 1-65535 of the pod's own user namespace, onto which goboxd maps the
# sandbox uids (goboxd --check names them; make verify-deploy checks
# that they fit).
RUN apt-get update -qq \
 && apt-get install -y -qq --no-install-recommends \
      libcjson1 libyaml-0-2 libcap2 libsystemd0 libseccomp2 \
      libsqlite3-0 libpq5 libzip4 libcurl4 libwslay1 \
      libprotobuf32 libnl-route-3-200 bubblewrap slirp4netns curl uidmap \
 && rm -rf /var/lib/apt/lists/* \
 && echo root:1:65535 | tee /etc/subuid /etc/subgid >/dev/null
WORKDIR /opt/goboxd
# Every language's packages, npm packages and install hooks, as on a host.
# This layer depends on the package lists and the language files only, so
# a change to goboxd's code rebuilds none of it.
# NPM_CAFILE: a CA bundle mounted into the build (never copied into the
# image) for a registry whose certificate only the build host trusts.
COPY --from=build /packages /opt/goboxd/packages
COPY setup.sh ./
COPY languages ./languages
ARG NPM_CAFILE=
RUN if [ -n "$NPM_CAFILE" ]; then export npm_config_cafile="$NPM_CAFILE"; fi \
 && GOBOXD_PACKAGE_LISTS=/opt/goboxd/packages ./setup.sh langs \
 && rm -rf /var/lib/apt/lists/* /root/.npm \
 && install -d /etc/goboxd \
 && cp -r languages /etc/goboxd/languages
COPY --from=nsjail /usr/local/bin/nsjail /usr/local/bin/nsjail
# goboxd in /usr/local/sbin, goboxd-init in /usr/local/libexec/goboxd, the
# man page: what `make install` puts on a host.
COPY --from=build /out/ /
EXPOSE 8080
STOPSIGNAL SIGTERM
HEALTHCHECK --interval=30s --timeout=5s CMD curl -fsS http://127.0.0.1:8080/healthz || exit 1
ENTRYPOINT ["/usr/local/sbin/goboxd"]
CMD ["--languages-dir", "/etc/goboxd/languages", "--jail", "auto"]
