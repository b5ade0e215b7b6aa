#!/bin/sh
# Install step of languages/kotlin.yaml, run by `setup.sh langs` after the
# packages: a class-data sharing archive of the Kotlin compiler.
#
# Most of a small build is the JVM loading and verifying the compiler's
# classes. The archive holds them as the JVM left them after one compile
# (-XX:ArchiveClassesAtExit), and each build maps it (-XX:SharedArchiveFile
# in kotlin.yaml): a hello world then takes about half the CPU time. The
# archive is only valid for this JDK build and these jars; when either
# changes, the JVM ignores it (kotlin.yaml silences the warning) and builds
# are correct but slow until this runs again (./setup.sh langs).
set -eu

java=/usr/lib/jvm/java-17-openjdk-amd64/bin/java
home=/opt/goboxd/npm/lib/node_modules/kotlin-compiler
archive=/opt/goboxd/kotlin-cds/kotlinc.jsa
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# A program that touches what judged programs use (classes, lambdas,
# collections, string templates, stdin), so that the compiler's classes
# for them are in the archive too.
cat >"$work/solution.kt" <<'KT'
data class P(val a: Long, val b: Long)

object Util {
    fun sum(ps: List<P>): Long = ps.map { it.a + it.b }.fold(0L) { x, y -> x + y }
}

fun main() {
    val ps = mutableListOf<P>()
    while (true) {
        val line = readlnOrNull() ?: break
        val (a, b) = line.trim().split(" ").map { it.toLong() }
        ps.add(P(a, b))
    }
    val byA = ps.groupBy { it.a }.mapValues { (_, v) -> v.size }
    when {
        ps.isEmpty() -> println("none")
        else -> println("${Util.sum(ps)} ${byA.size} ${ps.sortedBy { it.b }.first()}")
    }
}
KT
mkdir -p "$work/out"
# The options of kotlin.yaml's build step that shape the archive: the
# class path, the collector, compressed pointers (any heap under 32 GiB).
env -i PATH=/usr/bin:/bin HOME="$work" LANG=C.UTF-8 \
	"$java" -Xmx1024m -Xss4m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 \
	-Djava.io.tmpdir="$work" -Dkotlin.colors.enabled=false \
	-XX:ArchiveClassesAtExit="$work/kotlinc.jsa" -Xlog:cds=off -Xlog:cds+dynamic=off \
	-cp "$home/lib/kotlin-compiler.jar" org.jetbrains.kotlin.cli.jvm.K2JVMCompiler \
	-kotlin-home "$home" -d "$work/out" "$work/solution.kt"
test -s "$work/kotlinc.jsa"
chmod 0644 "$work/kotlinc.jsa"
mkdir -p "$(dirname "$archive")"
chmod 0755 "$(dirname "$archive")"
mv "$work/kotlinc.jsa" "$archive"
