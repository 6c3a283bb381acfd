#!/usr/bin/env bash
# Container test (docs/container.md): builds the image from ./Dockerfile and proves it works.
#
#   bash scripts/container-test.sh        (root, or a user with sudo; run by .ci/run)
#
# 1. Installs Debian's docker.io, debootstrap and curl when missing; starts the daemon when
#    none answers (`dockerd --iptables=false --bridge=none`: no bridge, containers use the
#    host's network).
# 2. Base images: uses node:20-bookworm-slim and node:20-bookworm when the daemon has them;
#    otherwise (no registry reachable) makes local stand-ins with those names: Debian bookworm
#    from `debootstrap --variant=minbase`, this machine's Node 20 and npm, and for the build
#    stage python3, make, g++ and Node's headers. Kept by the daemon between runs.
# 3. Builds the image (BuildKit; the machine's CA bundle is a build secret for npm).
# 4. Runs it as the README says, waits for health, calls one operation of every API family
#    over HTTPS with the CA copied out of the volume, restarts it and reads back what it wrote,
#    stops it with SIGTERM and checks the clean shutdown; then two containers on one
#    PostgreSQL: a write through one is read through the other.
# Ends with `container: N passed, M failed` and exits 1 when anything failed.
#
# Environment: STRATUS_IMAGE (default stratus:ci), STRATUS_CI_DATABASE_URL (default
# postgres://postgres@127.0.0.1:5432/test), STRATUS_DEBIAN_MIRROR (default: the machine's
# apt source), STRATUS_BUILD_CA (CA bundle for npm during the build; default
# $NODE_EXTRA_CA_CERTS or /etc/ssl/certs/ca-certificates.crt).
set -euo pipefail
cd "$(dirname "$0")/.."
T_START=$(date +%s)
IMAGE="${STRATUS_IMAGE:-stratus:ci}"
PG_URL="${STRATUS_CI_DATABASE_URL:-postgres://postgres@127.0.0.1:5432/test}"
RUN_ID="ctest-$$"
TMP=$(mktemp -d "${TMPDIR:-/tmp}/stratus-container-test.XXXXXX")
SUDO=""; [ "$(id -u)" -ne 0 ] && command -v sudo >/dev/null 2>&1 && SUDO="sudo"
PASSED=0; FAILED=0; FAILURES=()

say() { printf '== %s\n' "$*"; }
pass() { PASSED=$((PASSED + 1)); printf 'ok    %s\n' "$1"; }
fail() { FAILED=$((FAILED + 1)); FAILURES+=("$1"); printf 'FAIL  %s%s\n' "$1" "${2:+: $2}"; }
secs() { echo $(( $(date +%s) - $1 )); }
now_ms() { date +%s%3N; }
# The closing lines; exit 1 when a check failed.
finish() {
  printf '\nimage %s: %s MB; healthy %s ms after docker run; SIGTERM stop %s ms\n' "$IMAGE" "${SIZE_MB:-?}" "${HEALTHY_MS:-?}" "${STOP_MS:-?}"
  printf 'time: base images %s s, image build %s s, container checks %s s, total %s s\n' "${T_BASE:-?}" "${T_BUILD:-?}" "$( [ -n "${T_TESTS:-}" ] && secs "$T_TESTS" || echo '?')" "$(secs "$T_START")"
  [ "$FAILED" -eq 0 ] || printf 'failed: %s\n' "${FAILURES[@]}"
  echo "container: $PASSED passed, $FAILED failed"
  [ "$FAILED" -eq 0 ] && exit 0 || exit 1
}

# ---------------------------------------------------------------- 1. packages and the daemon
need=""
command -v dockerd >/dev/null 2>&1 || [ -x /usr/sbin/dockerd ] || need="$need docker.io"
command -v debootstrap >/dev/null 2>&1 || [ -x /usr/sbin/debootstrap ] || need="$need debootstrap"
command -v curl >/dev/null 2>&1 || need="$need curl"
if [ -n "$need" ]; then
  say "installing Debian packages:$need"
  $SUDO apt-get update
  # shellcheck disable=SC2086
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y --no-install-recommends $need
fi
# Debian's client reaches the daemon's own BuildKit without the buildx plug-in.
DOCKER_BIN=/usr/bin/docker; [ -x "$DOCKER_BIN" ] || DOCKER_BIN=$(command -v docker)
dk() { $SUDO "$DOCKER_BIN" "$@"; }
if ! dk info >/dev/null 2>&1; then
  say "starting dockerd (log: /var/log/stratus-dockerd.log)"
  $SUDO sh -c 'setsid nohup /usr/sbin/dockerd --iptables=false --bridge=none >/var/log/stratus-dockerd.log 2>&1 &'
  deadline=$(( $(date +%s) + 60 ))
  until dk info >/dev/null 2>&1; do
    [ "$(date +%s)" -lt "$deadline" ] || { echo "dockerd did not answer within 60 s; see /var/log/stratus-dockerd.log" >&2; exit 1; }
    sleep 0.5
  done
fi
export DOCKER_BUILDKIT=1
if ! probe=$(printf 'FROM scratch\n' | dk build -q - 2>"$TMP/bk.err"); then
  echo "docker build with BuildKit does not work here (the Dockerfile's RUN --mount needs it):" >&2
  cat "$TMP/bk.err" >&2; exit 1
fi
dk rmi "$probe" >/dev/null 2>&1 || true

CONTAINERS=(); VOLUMES=(); SCHEMA=""
cleanup() {
  for c in "${CONTAINERS[@]}"; do dk rm -f "$c" >/dev/null 2>&1 || true; done
  for v in "${VOLUMES[@]}"; do dk volume rm -f "$v" >/dev/null 2>&1 || true; done
  if [ -n "$SCHEMA" ] && command -v psql >/dev/null 2>&1; then psql -q "$PG_URL" -c "DROP SCHEMA IF EXISTS \"$SCHEMA\" CASCADE" >/dev/null 2>&1 || true; fi
  rm -rf "$TMP"
}
trap cleanup EXIT

# ---------------------------------------------------------------- 2. base images (stand-ins)
SLIM=node:20-bookworm-slim
FULL=node:20-bookworm
NODE_BIN=$(command -v node)
NODE_VERSION=$("$NODE_BIN" -v)
case "$NODE_VERSION" in v20.*) ;; *) echo "the stand-in needs this machine's Node 20; found $NODE_VERSION" >&2; exit 1 ;; esac
NPM_DIR=$(cd "$(dirname "$(readlink -f "$(command -v npm)")")/.." && pwd)   # …/node_modules/npm
NODE_DIR=$(npm config get nodedir 2>/dev/null || true)
[ -n "$NODE_DIR" ] && [ "$NODE_DIR" != undefined ] || NODE_DIR=$(dirname "$(dirname "$NODE_BIN")")
[ -d "$NODE_DIR/include/node" ] || { echo "Node's headers are not in $NODE_DIR/include/node (npm config get nodedir); node-gyp needs them" >&2; exit 1; }
RECIPE="stand-in-1 node-$NODE_VERSION npm-$(npm -v)"

# Whether `tag` must be made: absent, or a stand-in of an older recipe. An image without the
# stratus.standin label (the real one, pulled earlier) is used as it is.
needs_standin() {
  local label
  dk image inspect "$1" >/dev/null 2>&1 || return 0
  label=$(dk image inspect -f '{{ index .Config.Labels "stratus.standin" }}' "$1" 2>/dev/null || true)
  if [ -z "$label" ] || [ "$label" = "<no value>" ]; then echo "   $1: the daemon's own image (not a stand-in)"; return 1; fi
  [ "$label" = "$RECIPE" ] && { echo "   $1: cached stand-in ($label)"; return 1; }
  return 0
}

debian_mirror() {
  if [ -n "${STRATUS_DEBIAN_MIRROR:-}" ]; then echo "$STRATUS_DEBIAN_MIRROR"; return; fi
  local m
  m=$( { grep -hs '^URIs:' /etc/apt/sources.list.d/*.sources | awk '{print $2}'
         grep -hs '^deb ' /etc/apt/sources.list /etc/apt/sources.list.d/*.list | sed 's/\[[^]]*\]//' | awk '{print $2}'; } |
       grep -v -- '-security' | grep -E '/debian/?$' | head -n1 || true)
  echo "${m:-http://deb.debian.org/debian}"
}

make_slim_standin() {
  local root="$TMP/rootfs" mirror
  mirror=$(debian_mirror)
  say "stand-in $SLIM: debootstrap --variant=minbase bookworm from $mirror"
  $SUDO debootstrap --variant=minbase bookworm "$root" "$mirror" >"$TMP/debootstrap.log" 2>&1 ||
    { tail -n 30 "$TMP/debootstrap.log" >&2; echo "debootstrap failed" >&2; exit 1; }
  # Trim like Debian's slim images: no documentation, manual pages, translations, package lists.
  $SUDO sh -e -c '
    r=$1
    mkdir -p "$r/etc/dpkg/dpkg.cfg.d"
    printf "%s\n" "path-exclude /usr/share/doc/*" "path-include /usr/share/doc/*/copyright" "path-exclude /usr/share/man/*" \
      "path-exclude /usr/share/groff/*" "path-exclude /usr/share/info/*" "path-exclude /usr/share/lintian/*" \
      "path-exclude /usr/share/locale/*" > "$r/etc/dpkg/dpkg.cfg.d/docker-slim"
    find "$r/usr/share/doc" -mindepth 1 -not -name copyright -not -type d -delete
    rm -rf "$r"/usr/share/man/* "$r"/usr/share/info/* "$r"/usr/share/locale/* "$r"/usr/share/groff/* "$r"/usr/share/lintian/*
    rm -rf "$r"/var/cache/apt/archives/*.deb "$r"/var/cache/apt/*.bin "$r"/var/lib/apt/lists/* "$r"/var/log/*.log "$r"/etc/resolv.conf "$r"/etc/hostname
    mkdir -p "$r/var/lib/apt/lists/partial"
    # Node and npm where the official image has them (/usr/local), its user node (1000:1000).
    install -m 0755 "$2" "$r/usr/local/bin/node"
    mkdir -p "$r/usr/local/lib/node_modules" && cp -a "$3" "$r/usr/local/lib/node_modules/npm"
    ln -s ../lib/node_modules/npm/bin/npm-cli.js "$r/usr/local/bin/npm"
    ln -s ../lib/node_modules/npm/bin/npx-cli.js "$r/usr/local/bin/npx"
    chroot "$r" groupadd --gid 1000 node
    chroot "$r" useradd --uid 1000 --gid node --shell /bin/bash --create-home node
  ' sh "$root" "$NODE_BIN" "$NPM_DIR"
  $SUDO tar -C "$root" --numeric-owner -c . | dk import \
    --change "ENV NODE_VERSION=${NODE_VERSION#v}" \
    --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    --change "LABEL stratus.standin=\"$RECIPE\"" \
    --change 'CMD ["node"]' - "$SLIM" >/dev/null
  $SUDO rm -rf "$root"
}

make_full_standin() {
  # The official node:20-bookworm has python3, make and g++ (node-gyp); node-gyp takes
  # Node's headers from nodedir instead of downloading them (no download here).
  local ctx="$TMP/full"
  say "stand-in $FULL: $SLIM + python3, make, g++ (Debian) and Node's headers"
  mkdir -p "$ctx" && cp -a "$NODE_DIR/include/node" "$ctx/include"
  cat >"$ctx/Dockerfile" <<EOF
FROM $SLIM
RUN apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
COPY include /usr/local/include/node
RUN mkdir -p /usr/local/etc && printf 'nodedir=/usr/local\n' > /usr/local/etc/npmrc
LABEL stratus.standin="$RECIPE"
EOF
  dk build -q --network host -t "$FULL" "$ctx" >/dev/null
}

t=$(date +%s)
say "base images"
if needs_standin "$SLIM"; then make_slim_standin; fi
if needs_standin "$FULL"; then make_full_standin; fi
T_BASE=$(secs "$t")

# ---------------------------------------------------------------- 3. the image
BUILD_CA="${STRATUS_BUILD_CA:-${NODE_EXTRA_CA_CERTS:-/etc/ssl/certs/ca-certificates.crt}}"
SECRET=(); [ -s "$BUILD_CA" ] && SECRET=(--secret "id=npm_ca,src=$BUILD_CA")
say "docker build -t $IMAGE . (CA for npm: ${BUILD_CA})"
OLD_ID=$(dk image inspect -f '{{.Id}}' "$IMAGE" 2>/dev/null || true)
t=$(date +%s)
if dk build --network host "${SECRET[@]}" -t "$IMAGE" . >"$TMP/build.log" 2>&1; then
  T_BUILD=$(secs "$t")
  SIZE_MB=$(( $(dk image inspect -f '{{.Size}}' "$IMAGE") / 1000000 ))
  pass "image builds ($T_BUILD s, $SIZE_MB MB)"
  # The image this build replaced (left without a name) is removed, so repeated runs keep one.
  [ -n "$OLD_ID" ] && [ "$OLD_ID" != "$(dk image inspect -f '{{.Id}}' "$IMAGE")" ] && dk rmi "$OLD_ID" >/dev/null 2>&1 || true
else
  tail -n 40 "$TMP/build.log"; fail "image builds"; finish
fi

# ---------------------------------------------------------------- helpers for the calls
free_port() { node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'; }
port_free() { node -e 'const s=require("net").createServer().once("error",()=>process.exit(1)).listen(+process.argv[1],"0.0.0.0",()=>s.close())' "$1"; }
json() { node -e 'let v=JSON.parse(require("fs").readFileSync(0,"utf8"));for(const k of process.argv[1].split("."))v=v?.[k];process.stdout.write(v===undefined||v===null?"":typeof v==="object"?JSON.stringify(v):String(v))' "$1"; }
# call METHOD URL [curl args…]: sets CODE; the body is in $TMP/body.
call() {
  local m=$1 u=$2; shift 2
  CODE=$(curl -sS --max-time 20 --cacert "$CA" -o "$TMP/body" -w '%{http_code}' -X "$m" "$@" "$u" 2>"$TMP/curl.err") || CODE="000 $(cat "$TMP/curl.err")"
}
# tok BASE SCOPE: a delegated token for the administrator (password grant), as in the README.
tok() {
  curl -sS --max-time 20 --cacert "$CA" "$1/stratus.test/oauth2/v2.0/token" -d grant_type=password \
    -d username=admin@stratus.test -d password=Admin-Pass-1 -d scope="$2" | json access_token
}
# wait_healthy NAME HTTP_PORT: polls /_stratus/health (deadline 90 s); prints milliseconds taken from $3.
wait_healthy() {
  local deadline=$(( $(date +%s) + 90 ))
  until curl -fsS --max-time 2 "http://127.0.0.1:$2/_stratus/health" >/dev/null 2>&1; do
    if [ "$(date +%s)" -ge "$deadline" ] || [ "$(dk inspect -f '{{.State.Running}}' "$1" 2>/dev/null)" != true ]; then
      dk logs --tail 30 "$1" >&2 || true; return 1
    fi
    sleep 0.1
  done
  echo $(( $(now_ms) - $3 ))
}

# ---------------------------------------------------------------- 4. one container, SQLite
# The README's command. The daemon here has no bridge (--bridge=none), so the container uses
# the host's network and the ports are the container's own (8080/8443, or free ones when a
# server on this machine holds those); with a bridge it publishes them with -p.
NAME="stratus-$RUN_ID"; VOL="stratus-data-$RUN_ID"
CONTAINERS+=("$NAME"); VOLUMES+=("$VOL")
HTTP=8080; HTTPS=8443; PUBLISH=()
if dk network inspect bridge >/dev/null 2>&1; then
  port_free 8080 && port_free 8443 || { HTTP=$(free_port); HTTPS=$(free_port); }
  PUBLISH=(-p "$HTTP:8080" -p "$HTTPS:8443" -e "STRATUS_PUBLIC_URL=https://localhost:$HTTPS")
  [ "$HTTPS" = 8443 ] && PUBLISH=(-p 8080:8080 -p 8443:8443)
else
  port_free 8080 && port_free 8443 || { HTTP=$(free_port); HTTPS=$(free_port); }
  PUBLISH=(--network host)
  [ "$HTTP" = 8080 ] || PUBLISH+=(-e "STRATUS_HTTP_PORT=$HTTP" -e "STRATUS_HTTPS_PORT=$HTTPS")
fi
# World file: once worlds land (issue 28), mount one here, e.g.
#   WORLD=(-v "$PWD/test/fixtures/worlds/container.yaml:/world.yaml:ro" -e STRATUS_WORLD=/world.yaml)
WORLD=()
S="https://localhost:$HTTPS"
run_cmd=(run -d --name "$NAME" "${PUBLISH[@]}" -v "$VOL:/data" "${WORLD[@]}" "$IMAGE")
say "docker ${run_cmd[*]}"
T_TESTS=$(date +%s)
t0=$(now_ms)
dk "${run_cmd[@]}" >/dev/null || { fail "docker run"; finish; }
if ms=$(wait_healthy "$NAME" "$HTTP" "$t0"); then HEALTHY_MS=$ms; pass "healthy over HTTP in $ms ms"; else fail "healthy over HTTP" "no 200 from /_stratus/health within 90 s"; fi
CA="$TMP/ca.pem"
dk cp "$NAME:/data/tls/ca.pem" "$CA" >/dev/null 2>&1 || : >"$CA"

# Docker's own HEALTHCHECK (interval 5 s) reports healthy.
deadline=$(( $(date +%s) + 30 ))
until [ "$(dk inspect -f '{{.State.Health.Status}}' "$NAME" 2>/dev/null)" = healthy ] || [ "$(date +%s)" -ge "$deadline" ]; do sleep 0.5; done
st=$(dk inspect -f '{{.State.Health.Status}}' "$NAME" 2>/dev/null || true)
[ "$st" = healthy ] && pass "HEALTHCHECK reports healthy" || fail "HEALTHCHECK reports healthy" "status '$st' after 30 s"

uid=$(dk exec "$NAME" id -u 2>/dev/null || true)
[ "$uid" = 1000 ] && pass "runs as the unprivileged user node (uid 1000)" || fail "runs as an unprivileged user" "uid '$uid'"

# identity provider
ARM_TOKEN=$(tok "$S" api://stratus/arm/user_impersonation || true)
[ -n "$ARM_TOKEN" ] && pass "identity: password-grant token over HTTPS with the CA from the volume" || fail "identity: token" "no access_token"
# resource manager
call GET "$S/subscriptions/3c9a6f1e-2b8d-4e5a-9f7c-6d1e0a4b8c25/resourceGroups/stratus-rg/providers/Vendor.Automation/automationAccounts/stratus-automation/webhooks/nightly-hook?api-version=2024-10-23" -H "Authorization: Bearer $ARM_TOKEN"
[ "$CODE" = 200 ] && [ "$(json name <"$TMP/body")" = nightly-hook ] && pass "resource manager: webhook GET" || fail "resource manager: webhook GET" "$CODE $(head -c 200 "$TMP/body")"
# analytics
call GET "$S/v1.0/myorg/admin/dataflows?%24top=3" -H "Authorization: Bearer $(tok "$S" api://stratus/analytics/Tenant.Read.All)"
[ "$CODE" = 200 ] && [ -n "$(json value.0.objectId <"$TMP/body")" ] && pass "analytics: dataflows" || fail "analytics: dataflows" "$CODE $(head -c 200 "$TMP/body")"
# data platform: the write that must survive the restart
WS=7d0c6f2e-3a1b-4c5d-8e9f-0a1b2c3d4e5f
PLATFORM_TOKEN=$(tok "$S" api://stratus/platform/Item.ReadWrite.All || true)
STREAM_NAME="container-$RUN_ID"
call POST "$S/v1/workspaces/$WS/eventstreams" -H "Authorization: Bearer $PLATFORM_TOKEN" -H 'Content-Type: application/json' -d "{\"displayName\":\"$STREAM_NAME\"}"
STREAM_ID=$(json id <"$TMP/body" 2>/dev/null || true)
[ "$CODE" = 201 ] && [ -n "$STREAM_ID" ] && pass "data platform: eventstream create (201)" || fail "data platform: eventstream create" "$CODE $(head -c 200 "$TMP/body")"
# mail
call GET "$S/v1.0/me/messages?%24top=3&%24select=subject,from" -H "Authorization: Bearer $(tok "$S" api://stratus/mail/Mail.Read)"
[ "$CODE" = 200 ] && [ -n "$(json value.0.subject <"$TMP/body")" ] && pass "mail: messages" || fail "mail: messages" "$CODE $(head -c 200 "$TMP/body")"
# document host
call POST "$S/wopibootstrapper" -H "X-WOPI-EcosystemOperation: GET_ROOT_CONTAINER" -H "Authorization: Bearer $(tok "$S" api://stratus/wopi/user_impersonation)"
[ "$CODE" = 200 ] && pass "document host: bootstrapper" || fail "document host: bootstrapper" "$CODE $(head -c 200 "$TMP/body")"
# control plane, with the key from the volume
KEY=$(dk exec "$NAME" cat /data/control.key 2>/dev/null || true)
call GET "$S/_stratus/clock" -H "Authorization: Bearer $KEY"
[ -n "$KEY" ] && [ "$CODE" = 200 ] && pass "control plane: clock with the key from the volume" || fail "control plane: clock" "$CODE $(head -c 200 "$TMP/body")"

# restart: same volume, the eventstream and the token signing keys are still there
t0=$(now_ms)
dk restart -t 30 "$NAME" >/dev/null || true
if RESTART_MS=$(wait_healthy "$NAME" "$HTTP" "$t0"); then
  cp "$CA" "$TMP/ca-before.pem"; dk cp "$NAME:/data/tls/ca.pem" "$CA" >/dev/null 2>&1 || true
  call GET "$S/v1/workspaces/$WS/eventstreams/$STREAM_ID" -H "Authorization: Bearer $PLATFORM_TOKEN"
  if [ "$CODE" = 200 ] && [ "$(json displayName <"$TMP/body")" = "$STREAM_NAME" ] && cmp -s "$CA" "$TMP/ca-before.pem"; then
    pass "restart: healthy again in $RESTART_MS ms; the eventstream, the CA and the signing keys survived"
  else fail "restart: data survived" "$CODE $(head -c 200 "$TMP/body")"; fi
else fail "restart: healthy again" "no health within 90 s"; fi

# SIGTERM: docker stop sends the image's STOPSIGNAL (SIGKILL only after 30 s, so that a slow stop
# is measured); it must be over within Docker's default stop timeout, 10 s.
t0=$(now_ms)
dk stop -t 30 "$NAME" >/dev/null || true
STOP_MS=$(( $(now_ms) - t0 ))
code=$(dk inspect -f '{{.State.ExitCode}}' "$NAME" || true)
dk logs "$NAME" >"$TMP/logs" 2>&1 || true   # (not piped into grep -q: with pipefail its early exit fails the pipe)
if [ "$code" = 0 ] && grep -q '"signal":"SIGTERM".*"msg":"shutting down"' "$TMP/logs" && [ "$STOP_MS" -lt 10000 ]; then
  pass "SIGTERM: clean shutdown in $STOP_MS ms (exit 0, 'shutting down' logged)"
else fail "SIGTERM: clean shutdown" "exit $code after $STOP_MS ms; $(grep -c 'shutting down' "$TMP/logs") 'shutting down' lines"; fi

# ---------------------------------------------------------------- 5. two containers, one PostgreSQL
# Same STRATUS_DATABASE_URL, STRATUS_DATABASE_SCHEMA and STRATUS_PUBLIC_URL; one shared data
# volume (same CA and control key; the second starts once the first made them), own ports.
SCHEMA="container_test_$$"
PVOL="stratus-pg-$RUN_ID"; VOLUMES+=("$PVOL")
A="stratus-a-$RUN_ID"; B="stratus-b-$RUN_ID"; CONTAINERS+=("$A" "$B")
A_HTTP=$(free_port); A_HTTPS=$(free_port); B_HTTP=$(free_port); B_HTTPS=$(free_port)
PUBLIC="https://localhost:$A_HTTPS"
pg_run() { dk run -d --name "$1" --network host -v "$PVOL:/data" -e "STRATUS_DATABASE_URL=$PG_URL" -e "STRATUS_DATABASE_SCHEMA=$SCHEMA" \
  -e "STRATUS_PUBLIC_URL=$PUBLIC" -e "STRATUS_HTTP_PORT=$2" -e "STRATUS_HTTPS_PORT=$3" "$IMAGE" >/dev/null; }
say "two containers on $PG_URL (schema $SCHEMA)"
if pg_run "$A" "$A_HTTP" "$A_HTTPS" && wait_healthy "$A" "$A_HTTP" "$(now_ms)" >/dev/null &&
   pg_run "$B" "$B_HTTP" "$B_HTTPS" && wait_healthy "$B" "$B_HTTP" "$(now_ms)" >/dev/null; then
  dk cp "$A:/data/tls/ca.pem" "$CA" >/dev/null 2>&1 || true
  SA="https://localhost:$A_HTTPS"; SB="https://localhost:$B_HTTPS"
  TOKEN_B=$(tok "$SB" api://stratus/platform/Item.ReadWrite.All || true)
  call POST "$SA/v1/workspaces/$WS/eventstreams" -H "Authorization: Bearer $TOKEN_B" -H 'Content-Type: application/json' -d '{"displayName":"written-through-a"}'
  id=$(json id <"$TMP/body" 2>/dev/null || true); created=$CODE
  call GET "$SB/v1/workspaces/$WS/eventstreams/$id" -H "Authorization: Bearer $TOKEN_B"
  if [ "$created" = 201 ] && [ "$CODE" = 200 ] && [ "$(json displayName <"$TMP/body")" = written-through-a ]; then
    pass "PostgreSQL: a write through one container is read through the other (token of the other)"
  else fail "PostgreSQL: write through one, read through the other" "create $created, read $CODE $(head -c 200 "$TMP/body")"; fi
else
  fail "PostgreSQL: two containers healthy" "is PostgreSQL up at $PG_URL?"
fi

finish
