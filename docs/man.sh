#!/bin/sh
# man.sh OUT NAME VERSION SUMMARY PROGRAM [SUBCOMMAND]: OUT is the man page of `PROGRAM
# [SUBCOMMAND] --help`, as help2man renders it. The page has no other source: built with the
# binary, it says what --help says. help2man makes the help's "Options:", "Environment:",
# "Files:" and "Examples:" sections; the other headings it leaves as subsections of OPTIONS
# ("Exit status:", "History collectors ...:"), made sections here.
set -eu
out=$1 name=$2 version=$3 summary=$4 program=$5 subcommand=${6:-}
help2man --no-info --no-discard-stderr \
  --version-string="$name (hindsight) $version" --name="$summary" \
  --help-option="${subcommand:+$subcommand }--help" \
  "$program" |
  sed -e 's/^\.SS "Exit status:"$/.SH "EXIT STATUS"/' \
      -e 's/^\.SS "History collectors[^"]*:"$/.SH "HISTORY COLLECTORS"/' > "$out.tmp"
if ! grep -q '^\.SH "EXIT STATUS"' "$out.tmp"; then
  echo "man.sh: no 'Exit status:' section in $program ${subcommand:+$subcommand }--help" >&2
  exit 1
fi
mv "$out.tmp" "$out"
