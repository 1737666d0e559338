#!/usr/bin/env bash
# test/package/package.sh STEP WORK: the Debian packages, as a user gets them. test.sh runs the
# steps in order; WORK is a folder outside the checkout (its contents are replaced).
#   build    dpkg-buildpackage -us -uc -b on a clone of HEAD (the packages are a commit's; what is
#            not committed is not in them), the versions of meson and debian/changelog agreeing
#   lintian  lintian on the result: no errors (the warnings it gives are in docs/packaging.md)
#   install  apt-get install ./*.deb; then the installed hindsight: --version finds the dbt
#            recorder installed, the man pages and the bash completion are there and work
#   remove   apt-get purge; every file the packages had is gone
# test/package/package.sh destdir WORK BUILD_DIR: `meson install` of BUILD_DIR into a DESTDIR
#            tree, whose hindsight finds its own recorder and agent there and records with them.
set -euo pipefail
step=$1 work=$2
root=$(cd "$(dirname "$0")/../.." && pwd)
as_root=()
[[ $(id -u) == 0 ]] || as_root=(sudo)
packages=(hindsight hindsight-dbt)

case $step in
  build)
    rm -rf "$work"/*
    mkdir -p "$work"
    git clone --quiet --shared "$root" "$work/hindsight"
    cd "$work/hindsight"
    meson_version=$(sed -nE "s/^ *version *: *'([^']+)'.*/\1/p" meson.build | head -1)
    changelog_version=$(dpkg-parsechangelog -S Version)
    if [[ $meson_version != "$changelog_version" ]]; then
      echo "meson.build says $meson_version, debian/changelog $changelog_version" >&2
      exit 1
    fi
    # meson compiles through ccache where it is installed; its cache outside the checkout, a CI
    # run recompiles what changed since the last.
    export CCACHE_DIR=${CCACHE_DIR:-$HOME/.cache/hindsight-ccache}
    DEB_BUILD_OPTIONS="parallel=$(nproc)" dpkg-buildpackage -us -uc -b
    command -v ccache >/dev/null && ccache --show-stats | grep -iE "hits|misses" || true
    ls -l "$work"/*.deb
    ;;
  lintian)
    cd "$work"
    lintian --fail-on error --info ./*.changes
    ;;
  install)
    cd "$work"
    DEBIAN_FRONTEND=noninteractive "${as_root[@]}" apt-get install -y -qq ./hindsight_*.deb ./hindsight-dbt_*.deb
    for p in "${packages[@]}"; do dpkg -L "$p"; done > "$work/files.txt"
    version=$(/usr/bin/hindsight --version)
    echo "$version"
    # The installed binary finds the installed recorder and agent (not the build tree's).
    grep -E "^  dbt    yes \(/usr/libexec/hindsight/dbt\)$" <<<"$version"
    grep -E "^  inproc yes \(/usr/lib/[^/]+/hindsight/libhindsight-recorder.so\)$" <<<"$version"
    grep -E "^Fast tracepoints: the agent is /usr/lib/[^/]+/hindsight/libhindsight-agent.so$" <<<"$version"
    grep -E "^Hindsight [0-9.]+ \(git [0-9a-f]{12}\)$" <<<"$version"
    # Every option of --help is in the man page.
    for page in "hindsight" "hindsight-triage"; do
      man_text=$(MANWIDTH=200 man "$page" 2>/dev/null | col -b)
      help=$(if [[ $page == hindsight ]]; then hindsight --help; else hindsight triage --help; fi)
      for option in $(grep -oE '^  (-[a-zA-Z],)?--[a-z0-9-]+' <<<"$help" | sed -E 's/^ +(-[a-zA-Z],)?//'); do
        grep -q -- "$option" <<<"$man_text" || { echo "$page(1) lacks $option" >&2; exit 1; }
      done
      grep -q "^EXIT STATUS" <<<"$man_text" && grep -q "^ENVIRONMENT" <<<"$man_text" &&
        grep -q "^HISTORY COLLECTORS" <<<"$man_text" || { echo "$page(1) lacks a section" >&2; exit 1; }
    done
    # The completion, as bash loads it on demand (triage's options take the next word as value).
    completion=$(bash -c 'source /usr/share/bash-completion/bash_completion
      _completion_loader hindsight
      COMP_WORDS=(hindsight triage --btrace ""); COMP_CWORD=3; _hindsight hindsight "" --btrace; echo "${COMPREPLY[*]}"' 2>/dev/null)
    [[ $completion == "auto bts dbt soft step inproc" ]] || { echo "completion of --btrace: '$completion'" >&2; exit 1; }
    ;;
  remove)
    DEBIAN_FRONTEND=noninteractive "${as_root[@]}" apt-get purge -y -qq "${packages[@]}"
    left=0
    while read -r path; do
      # Directories other packages share stay; what the packages brought must not.
      if [[ -e $path || -L $path ]] && ! [[ -d $path && ! -L $path ]]; then
        echo "left behind: $path" >&2
        left=1
      fi
    done < "$work/files.txt"
    for dir in /usr/libexec/hindsight /usr/share/doc/hindsight /usr/share/doc/hindsight-dbt; do
      [[ ! -e $dir ]] || { echo "left behind: $dir" >&2; left=1; }
    done
    ls /usr/lib/*/hindsight 2>/dev/null && left=1
    exit $left
    ;;
  destdir)
    build=$3
    rm -rf "$work/destdir"
    DESTDIR="$work/destdir" meson install -C "$build" --no-rebuild --quiet
    prefix=$(meson introspect "$build" --buildoptions | python3 -c \
      'import json, sys; print(next(o["value"] for o in json.load(sys.stdin) if o["name"] == "prefix"))')
    tree=$work/destdir$prefix
    version=$("$tree/bin/hindsight" --version)
    echo "$version"
    grep -F "  dbt    yes ($tree/libexec/hindsight/dbt)" <<<"$version"
    grep -E "^  inproc yes \($tree/lib/[^/]+/hindsight/libhindsight-recorder.so\)$" <<<"$version"
    grep -E "^Fast tracepoints: the agent is $tree/lib/[^/]+/hindsight/libhindsight-agent.so$" <<<"$version"
    # A run under that tree's recorder: a crash reported, recorded with dbt.
    set +e
    "$tree/bin/hindsight" triage --btrace=dbt -- "$build/test/progs/triage_cases" returned 2> "$work/destdir-triage.txt"
    status=$?
    set -e
    cat "$work/destdir-triage.txt"
    ((status == 128 + 11)) && grep -q "recorded with dbt" "$work/destdir-triage.txt"
    rm -rf "$work/destdir"
    ;;
  *)
    echo "usage: $0 build|lintian|install|remove|destdir WORK [BUILD_DIR]" >&2
    exit 2
    ;;
esac
