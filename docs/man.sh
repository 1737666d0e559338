#!/bin/sh
# man.sh OUT NAME VERSION SUMMARY PROGRAM SUBCOMMAND [BUILT=INSTALLED...]: OUT is the man page of
# `PROGRAM [SUBCOMMAND] --help`, as help2man renders it. The page has no other source: built with
# the binary, it says what --help says, but for the files the binary uses from the build tree
# (each BUILT path), which the page names where they are installed (INSTALLED). help2man makes
# the help's "Options:", "Environment:", "Files:" and "Examples:" sections; the other headings
# it leaves as subsections of OPTIONS ("Exit status:", "History collectors ...:"), made sections
# here.
set -eu
out=$1 name=$2 version=$3 summary=$4 program=$5 subcommand=${6:-}
shift 6 2>/dev/null || shift $#
installed="-e 's|^||'"
for pair in "$@"; do
  installed="$installed -e 's|${pair%%=*}|${pair#*=}|g'"
done
# help2man runs this in the program's place: its help with the installed paths.
help="$out.help"
printf '#!/bin/sh\nunset HINDSIGHT_DBT_LIB HINDSIGHT_RECORDER_LIB\n"%s" "$@" | sed %s\n' "$program" "$installed" > "$help"
chmod +x "$help"
help2man --no-info --no-discard-stderr \
  --version-string="$name (hindsight) $version" --name="$summary" \
  --help-option="${subcommand:+$subcommand }--help" \
  "$help" |
  sed -e 's/^\.SS "Exit status:"$/.SH "EXIT STATUS"/' \
      -e 's/^\.SS "History collectors[^"]*:"$/.SH "HISTORY COLLECTORS"/' > "$out.tmp"
rm -f "$help"
if ! grep -q '^\.SH "EXIT STATUS"' "$out.tmp"; then
  echo "man.sh: no 'Exit status:' section in $program ${subcommand:+$subcommand }--help" >&2
  exit 1
fi
mv "$out.tmp" "$out"
