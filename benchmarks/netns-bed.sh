#!/usr/bin/env bash
# Sourced by the benchmark scripts that put Ferry's agents on test hosts of their own (as root):
# N network namespaces PREFIX0..PREFIX(N-1) on a bridge PREFIXbr in the root namespace holding
# NET.1/24, host i at NET.1i on its eth0 (a veth PREFIXvI / PREFIXpI pair), lo up.
#   bed_up PREFIX NET N      makes them (after bed_down: a leftover bed of the same names goes first)
#   bed_down PREFIX N        kills what runs in them and deletes them, the veths and the bridge
bed_down() {
  local prefix="$1" n="$2" i p
  for ((i = 0; i < n; i++)); do
    for p in $(ip netns pids "$prefix$i" 2> /dev/null); do kill -9 "$p" 2> /dev/null || true; done
    ip netns del "$prefix$i" 2> /dev/null || true
    ip link del "${prefix}v$i" 2> /dev/null || true # where a process kept its namespace
  done
  ip link del "${prefix}br" 2> /dev/null || true
}

bed_up() {
  local prefix="$1" net="$2" n="$3" i
  bed_down "$prefix" "$n"
  ip link add "${prefix}br" type bridge
  ip addr add "$net.1/24" dev "${prefix}br"
  ip link set "${prefix}br" up
  for ((i = 0; i < n; i++)); do
    ip netns add "$prefix$i"
    ip link add "${prefix}v$i" type veth peer name "${prefix}p$i"
    ip link set "${prefix}p$i" netns "$prefix$i"
    ip link set "${prefix}v$i" master "${prefix}br" up
    ip netns exec "$prefix$i" ip link set "${prefix}p$i" name eth0
    ip netns exec "$prefix$i" ip addr add "$net.1$i/24" dev eth0
    ip netns exec "$prefix$i" ip link set eth0 up
    ip netns exec "$prefix$i" ip link set lo up
  done
}
