# Sourced by the lanes that debootstrap a Debian root (test/clients, test/containers).
# debian_mirror: the archive to fetch from: HINDSIGHT_CLIENTS_MIRROR, else the first Debian URI
# in apt's sources, else http://deb.debian.org/debian.
debian_mirror() {
  if [[ -n ${HINDSIGHT_CLIENTS_MIRROR:-} ]]; then
    echo "$HINDSIGHT_CLIENTS_MIRROR"
    return
  fi
  local uri
  uri=$(grep -hoE '(URIs:|^deb) +https?://[^ ]+/debian/?( |$)' /etc/apt/sources.list.d/* /etc/apt/sources.list \
        2>/dev/null | grep -oE 'https?://[^ ]+' | head -1)
  echo "${uri:-http://deb.debian.org/debian}"
}
