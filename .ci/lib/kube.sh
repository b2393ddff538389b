# shellcheck shell=bash
# A real Kubernetes control plane (kube-apiserver + etcd) for integration
# tests, with no kubelet. Source it from an integration script:
#
#   source .ci/lib/kube.sh || exit 0   # not CI: skipped with a banner
#
# It
#   1. installs Debian's etcd-server with apt when `etcd` is not on PATH;
#   2. builds kube-apiserver from the Go module k8s.io/kubernetes (version
#      $ASTRAEA_KUBE_VERSION, default 1.36.1) once, into
#      $ASTRAEA_CACHE/kube/v$VERSION/bin (ASTRAEA_CACHE defaults to
#      $HOME/.cache/astraea). Its go.mod is the kubernetes module's own
#      require list, with the staging modules (k8s.io/api, client-go, ...)
#      replaced by their published v0.X.Y, and the binary is stamped with
#      its version (-X k8s.io/component-base/version.gitVersion=...), since
#      clients refuse a server that reports v0.0.0-master. Concurrent
#      callers wait on a flock of $ASTRAEA_CACHE/kube/v$VERSION/lock; the
#      build happens in a temporary directory beside bin/ and is renamed
#      into place, so bin/ is either absent or complete;
#   3. exports KUBEBUILDER_ASSETS (that bin/ directory, also holding an
#      `etcd` symlink), which controller-runtime's envtest reads, and
#      ASTRAEA_KUBE_APISERVER and ASTRAEA_ETCD, the two binaries' paths.
#
# Only apt and the Go module proxy are used. When something cannot be had
# it prints a banner and, under CI=true, exits 1 (the caller with it);
# otherwise the `source` returns 1.
#
# Cost, measured on 2 cores shared with other builds (load average 35-50):
# cold (empty Go module and build caches), the download and build of
# kube-apiserver (~1,900 packages, under `nice -n 10`) took 65 min of wall
# time (an interrupted 22 min run, then 43 min); on an idle 2-core machine
# expect a fraction of that. apt's etcd-server: about 20 s. Warm: 1.2 s
# (the cached binary's version is checked, nothing is built). The cache
# holds one ~100 MB binary per version; delete $ASTRAEA_CACHE/kube to
# rebuild.

ASTRAEA_KUBE_VERSION=${ASTRAEA_KUBE_VERSION:-1.36.1}
ASTRAEA_CACHE=${ASTRAEA_CACHE:-$HOME/.cache/astraea}

_kube_say() { echo "kube: $*" >&2; }

_kube_unavailable() {
  echo "############################################################" >&2
  echo "## Kubernetes test control plane NOT AVAILABLE: $*" >&2
  echo "############################################################" >&2
}

# _kube_etcd makes sure an etcd binary is on PATH, installing Debian's
# etcd-server if needed.
_kube_etcd() {
  command -v etcd >/dev/null 2>&1 && return 0
  if [ "$(id -u)" != 0 ]; then
    _kube_unavailable "etcd is not installed and we are not root"
    return 1
  fi
  _kube_say "installing Debian's etcd-server"
  local log=${TMPDIR:-/tmp}/astraea-etcd-apt.log
  export DEBIAN_FRONTEND=noninteractive
  # another apt may hold the dpkg lock (a concurrent integration script)
  if ! { timeout 120 apt-get -o DPkg::Lock::Timeout=300 update -q &&
    timeout 400 apt-get -o DPkg::Lock::Timeout=300 install -y -q etcd-server; } >"$log" 2>&1; then
    _kube_unavailable "apt-get install etcd-server failed (see $log)"
    return 1
  fi
  # the package enables a system service; tests start their own etcd
  command -v etcd >/dev/null 2>&1 || { _kube_unavailable "etcd-server installed no etcd"; return 1; }
}

# _kube_apiserver_ok BIN reports whether BIN runs and is the wanted version.
_kube_apiserver_ok() {
  [ -x "$1" ] && "$1" --version 2>/dev/null | grep -qx "Kubernetes v$ASTRAEA_KUBE_VERSION"
}

# _kube_build DIR builds kube-apiserver into DIR/bin, under the lock.
_kube_build() {
  local root=$1 bin=$1/bin v=$ASTRAEA_KUBE_VERSION
  local minor=${v#*.}
  minor=${minor%%.*}
  if _kube_apiserver_ok "$bin/kube-apiserver"; then return 0; fi
  command -v go >/dev/null 2>&1 || { _kube_unavailable "go is not on PATH"; return 1; }
  local tmp
  tmp=$(mktemp -d "$root/build.XXXXXX") || return 1
  _kube_say "building kube-apiserver v$v from the Go module (once; cached in $bin)"
  local t0=$SECONDS log=$tmp/build.log
  (
    set -e
    cd "$tmp"
    export GOWORK=off GOFLAGS=-mod=mod
    go mod download -json "k8s.io/kubernetes@v$v" >dl.json
    mod=$(sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",$/\1/p' dl.json)
    [ -f "$mod" ]
    {
      echo "module astraea.invalid/kube-apiserver"
      echo
      grep -m1 '^go ' "$mod"
      grep -m1 '^godebug ' "$mod" || true
      echo
      echo "require k8s.io/kubernetes v$v"
      echo
      # the kubernetes module's own require blocks, so that every
      # dependency is at the version it was released with
      awk '/^replace/{exit} /^require \(/{p=1} p' "$mod"
      echo
      echo "replace ("
      # staging modules: ./staging/src/k8s.io/X => k8s.io/X v0.<minor>.<patch>
      sed -n '/^replace (/,/^)/p' "$mod" |
        awk -v sv="v0.${v#*.}" '$2 == "=>" && $3 ~ /^\.\/staging\// {print "\t" $1 " => " $1 " " sv}'
      echo ")"
    } >go.mod
    nice -n 10 go build -o bin/kube-apiserver -ldflags "-s -w \
      -X k8s.io/component-base/version.gitVersion=v$v \
      -X k8s.io/component-base/version.gitMajor=1 \
      -X k8s.io/component-base/version.gitMinor=$minor \
      -X k8s.io/component-base/version.gitTreeState=clean" \
      k8s.io/kubernetes/cmd/kube-apiserver
  ) >"$log" 2>&1
  local rc=$?
  if [ $rc != 0 ] || ! _kube_apiserver_ok "$tmp/bin/kube-apiserver"; then
    tail -n 30 "$log" >&2
    _kube_unavailable "building kube-apiserver v$v from k8s.io/kubernetes failed (log above)"
    rm -rf "$tmp"
    return 1
  fi
  rm -rf "$bin"
  mv -T "$tmp/bin" "$bin" && rm -rf "$tmp" || return 1
  _kube_say "built kube-apiserver v$v in $((SECONDS - t0)) s"
}

_kube_setup() {
  _kube_etcd || return 1
  if ! command -v flock >/dev/null 2>&1; then
    _kube_unavailable "flock (util-linux) is not on PATH"
    return 1
  fi
  local root=$ASTRAEA_CACHE/kube/v$ASTRAEA_KUBE_VERSION
  mkdir -p "$root" || { _kube_unavailable "cannot create $root"; return 1; }
  local fd rc
  exec {fd}>"$root/lock" || return 1
  if ! flock -w 1800 "$fd"; then
    exec {fd}>&-
    _kube_unavailable "timed out waiting for another build of kube-apiserver ($root/lock)"
    return 1
  fi
  _kube_build "$root"
  rc=$?
  # envtest looks for etcd beside kube-apiserver
  [ $rc = 0 ] && ln -sfn "$(command -v etcd)" "$root/bin/etcd"
  exec {fd}>&-
  [ $rc = 0 ] || return 1
  export KUBEBUILDER_ASSETS=$root/bin
  export ASTRAEA_KUBE_APISERVER=$root/bin/kube-apiserver
  export ASTRAEA_ETCD=$root/bin/etcd
  _kube_say "KUBEBUILDER_ASSETS=$KUBEBUILDER_ASSETS ($("$ASTRAEA_KUBE_APISERVER" --version), $(etcd --version 2>/dev/null | head -n 1))"
}

if ! _kube_setup; then
  if [ "${CI:-}" = true ]; then exit 1; fi
  return 1
fi
