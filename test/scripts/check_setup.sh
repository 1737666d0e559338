#!/usr/bin/env bash
# scripts/setup.sh cannot half-work: a package it cannot install stops it with the reason and a
# non-zero status, and without root (and without sudo) it says so instead of trying.
# Exit status 77: skipped (the check needs root).
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
SETUP=$ROOT/scripts/setup.sh
fail() { echo "FAIL: $*"; exit 1; }

out=$("$SETUP" --install coreutils 2>&1) || fail "an installed package is an error: $out"
grep -q "nothing to install (1 packages checked)" <<<"$out" || fail "no word of what it checked: $out"

if [[ $(id -u) == 0 ]] && command -v runuser >/dev/null; then
  # As nobody, with a PATH that has no sudo: refused with the reason.
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  for tool in bash dpkg-query grep id dirname mktemp; do ln -s "$(command -v $tool)" "$tmp/$tool"; done
  cp "$SETUP" "$tmp/setup.sh"
  chmod 755 "$tmp" "$tmp/setup.sh"
  out=$(runuser -u nobody -- env PATH="$tmp" bash "$tmp/setup.sh" --install hindsight-no-such-package 2>&1)
  rc=$?
  ((rc != 0)) || fail "a package it could not install ended with status 0: $out"
  grep -q "need root to install hindsight-no-such-package" <<<"$out" || fail "no reason given: $out"
  echo "without root or sudo: refused, status $rc: $out"
  echo "setup checks passed"
else
  echo "skipped: the check as another user without sudo needs root (runuser)"
  exit 77
fi
