# goboxd with both jail drivers: nsjail built from the pinned submodule
# (nsjail/upstream, tag 3.4) and bubblewrap from Debian. Build context must
# hold the submodule: git submodule update --init --recursive
# Run with: docker run --privileged -p 8080:8080 goboxd

FROM debian:12 AS nsjail
RUN apt-get update -qq \
 && apt-get install -y -qq --no-install-recommends \
      g++ make pkg-config bison flex protobuf-compiler libprotobuf-dev \
      libnl-route-3-dev ca-certificates \
 && rm -rf /var/lib/apt/lists/*
COPY nsjail/upstream /src/nsjail
RUN test -f /src/nsjail/Makefile -a -f /src/nsjail/kafel/Makefile \
      || { echo "nsjail/upstream is empty: run 'git submodule update --init --recursive'" >&2; exit 1; } \
 && make -C /src/nsjail -j"$(nproc)" \
 && install -m 0755 /src/nsjail/nsjail /usr/local/bin/nsjail

FROM debian:12
RUN apt-get update -qq \
 && apt-get install -y -qq --no-install-recommends libprotobuf32 libnl-route-3-200 \
 && rm -rf /var/lib/apt/lists/*
COPY --from=nsjail /usr/local/bin/nsjail /usr/local/bin/nsjail
WORKDIR /opt/goboxd
COPY . .
# The same script CI runs: packages, build, every language's toolchain.
RUN ./setup.sh install && rm -rf /var/lib/apt/lists/*
RUN install -d /etc/goboxd && cp -r languages /etc/goboxd/languages
EXPOSE 8080
STOPSIGNAL SIGTERM
HEALTHCHECK --interval=30s --timeout=5s CMD curl -fsS http://127.0.0.1:8080/healthz || exit 1
ENTRYPOINT ["/opt/goboxd/build/goboxd"]
CMD ["--languages-dir", "/etc/goboxd/languages", "--jail", "auto"]
