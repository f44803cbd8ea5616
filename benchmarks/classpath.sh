#!/usr/bin/env bash
# Sourced by the benchmark scripts: builds Ferry (reactor, offline with MVN_FLAGS=-o, nothing
# installed into ~/.m2) and sets $cp to the benchmarks' classpath, the reactor's classes first
# (~/.m2 may hold older snapshots of Ferry's own modules). Expects $here (the repository root).
mvn ${MVN_FLAGS:-} -q -B package -DskipTests -DskipITs -pl benchmarks -am
mvn ${MVN_FLAGS:-} -q -B dependency:build-classpath -pl benchmarks -Dmdep.outputFile="$here/benchmarks/target/classpath.txt"
cp="benchmarks/target/classes"
for m in model eventlog coordinator staging stores compression capture-agent cli; do cp="$cp:$m/target/classes"; done
cp="$cp:$(cat benchmarks/target/classpath.txt)"
