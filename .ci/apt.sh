# Sourced by the scripts that install Debian packages.

# apt_install installs Debian packages, as root or through sudo. On a fresh
# machine another package manager (an unattended upgrade, cloud-init) often
# holds the lock for a few minutes: that is waited for, up to ten minutes,
# rather than failing the run.
apt_install() {
  echo "installing $*" >&2
  local sudo=""
  [ "$(id -u)" = 0 ] || sudo=sudo
  apt_waiting $sudo apt-get -o DPkg::Lock::Timeout=600 update -qq &&
    apt_waiting $sudo env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -qq "$@"
}

# apt_waiting runs an apt-get command, and runs it again while it fails
# because another process holds one of apt's locks (apt-get update waits
# for none of them by itself), until ten minutes have passed.
apt_waiting() {
  local deadline=$((SECONDS + 600)) out
  while :; do
    if out=$("$@" 2>&1); then
      [ -z "$out" ] || printf '%s\n' "$out" >&2
      return 0
    fi
    printf '%s\n' "$out" >&2
    case $out in
      *"Could not get lock"* | *"Unable to lock"* | *"is held by process"*) ;;
      *) return 1 ;;
    esac
    if [ "$SECONDS" -ge "$deadline" ]; then
      echo "the package manager's lock was still held after ten minutes" >&2
      return 1
    fi
    echo "waiting for another package manager to release its lock" >&2
    sleep 5
  done
}
