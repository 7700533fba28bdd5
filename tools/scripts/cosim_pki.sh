#!/usr/bin/env bash
# Creates the DDS Security files of one bench (docs/distributed.md, "Security") with the
# openssl command line: a CA that is both identity CA and permissions CA, an identity
# (certificate + private key) for the master and for each worker, and governance and
# permissions documents signed by the CA (S/MIME, as DDS Security specifies).
#
#   cosim_pki.sh --out DIR [--bench NAME] [--domain D] [--partition P]
#                [--workers N | --worker NAME ...] [--days N] [--ca-from DIR]
#
# DIR/ca.pem, ca.key          the bench's CA (keep ca.key offline once the bench is set up)
# DIR/master.pem, master.key  the master's identity
# DIR/NAME.pem, NAME.key      each worker's identity (default names worker1 ... workerN)
# DIR/governance.p7s          signed governance: the cosim topics encrypted and access-controlled
# DIR/permissions.p7s         signed permissions: the subjects above on domain D, partition P
#                             (P may hold '*' wildcards: 'bench1-*' grants every partition
#                             whose name starts with bench1-)
# DIR/*.xml                   the unsigned documents, for reading
#
# --ca-from DIR reuses the CA of an earlier run (its ca.pem and ca.key) instead of making a
# new one: new identities and documents under the same trust anchor (rotation).
set -euo pipefail

usage() {
  sed -n '7,8p' "$0" | sed 's/^# *//' >&2
  exit 2
}

out=""
bench="cosim bench"
domain=0
partition="cosim"
days=365
workers=()
n_workers=""
ca_from=""
while [ $# -gt 0 ]; do
  case "$1" in
    --out) out="${2:?--out needs a folder}"; shift 2 ;;
    --bench) bench="${2:?--bench needs a name}"; shift 2 ;;
    --domain) domain="${2:?--domain needs an id}"; shift 2 ;;
    --partition) partition="${2:?--partition needs a name}"; shift 2 ;;
    --workers) n_workers="${2:?--workers needs a count}"; shift 2 ;;
    --worker) workers+=("${2:?--worker needs a name}"); shift 2 ;;
    --days) days="${2:?--days needs a number}"; shift 2 ;;
    --ca-from) ca_from="${2:?--ca-from needs a folder}"; shift 2 ;;
    -h|--help) usage ;;
    *) echo "cosim_pki: unknown argument '$1'" >&2; usage ;;
  esac
done
[ -n "$out" ] || { echo "cosim_pki: --out DIR is required" >&2; usage; }
command -v openssl >/dev/null ||
  { echo "cosim_pki: needs the openssl program (tools/scripts/install_deps.sh installs it)" >&2; exit 2; }
[[ "$domain" =~ ^[0-9]+$ ]] && [ "$domain" -le 230 ] ||
  { echo "cosim_pki: --domain $domain: must be a DDS domain id from 0 to 230" >&2; exit 2; }
[[ "$days" =~ ^[0-9]+$ ]] && [ "$days" -ge 1 ] ||
  { echo "cosim_pki: --days $days: must be a whole number of days, at least 1" >&2; exit 2; }
# Names end up in certificate subjects and XML: keep them to a safe alphabet.
safe='^[A-Za-z0-9][A-Za-z0-9 ._-]*$'
[[ "$bench" =~ $safe ]] ||
  { echo "cosim_pki: --bench '$bench': letters, digits, space, '.', '_', '-' only" >&2; exit 2; }
[[ "$partition" =~ ^[A-Za-z0-9._*-]+$ ]] ||
  { echo "cosim_pki: --partition '$partition': letters, digits, '.', '_', '-', '*' only" >&2; exit 2; }
if [ -n "$n_workers" ]; then
  [[ "$n_workers" =~ ^[0-9]+$ ]] && [ "$n_workers" -ge 1 ] ||
    { echo "cosim_pki: --workers $n_workers: must be at least 1" >&2; exit 2; }
  for ((i = 1; i <= n_workers; i++)); do workers+=("worker$i"); done
fi
[ ${#workers[@]} -gt 0 ] || workers=(worker1)
for w in "${workers[@]}"; do
  [[ "$w" =~ ^[A-Za-z0-9_-]+$ ]] && [ "$w" != master ] && [ "$w" != ca ] ||
    { echo "cosim_pki: --worker '$w': letters, digits, '_', '-' only, not 'master' or 'ca'" >&2; exit 2; }
done

mkdir -p "$out"
chmod 700 "$out"
cd "$out"
umask 077

# EC P-256 keys: one of the two key types Cyclone's authentication plugin accepts (with
# RSA-2048), and the faster handshake.
new_key() { openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$1" 2>/dev/null; }

if [ -n "$ca_from" ]; then
  [ -f "$ca_from/ca.pem" ] && [ -f "$ca_from/ca.key" ] ||
    { echo "cosim_pki: --ca-from $ca_from: needs ca.pem and ca.key there" >&2; exit 2; }
  if [ "$(cd "$ca_from" && pwd)" != "$(pwd)" ]; then
    cp "$ca_from/ca.pem" ca.pem
    cp "$ca_from/ca.key" ca.key
  fi
else
  new_key ca.key
  openssl req -x509 -new -key ca.key -sha256 -days "$days" -subj "/O=$bench/CN=$bench CA" \
    -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign,digitalSignature" \
    -out ca.pem
fi

# Subject of an identity, as the permissions document names it.
subject_dn() { echo "CN=$1,O=$bench"; }

identity() {
  local name=$1
  new_key "$name.key"
  openssl req -new -key "$name.key" -subj "/O=$bench/CN=$name" -out "$name.csr"
  openssl x509 -req -in "$name.csr" -CA ca.pem -CAkey ca.key -set_serial "0x$(openssl rand -hex 16)" \
    -sha256 -days "$days" -out "$name.pem" 2>/dev/null
  rm -f "$name.csr"
}
identity master
for w in "${workers[@]}"; do identity "$w"; done

now=$(date -u +%Y-%m-%dT%H:%M:%S)
until=$(date -u -d "+$days days" +%Y-%m-%dT%H:%M:%S)

# Governance: nobody joins the domain without an identity from this CA and a permissions
# grant (enable_join_access_control); discovery, liveliness and every RTPS message are
# encrypted; the cosim topics are readable and writable only as the permissions say, their
# samples and metadata encrypted. Any other topic is refused (no rule matches it).
cat > governance.xml <<EOF
<?xml version="1.0" encoding="UTF-8"?>
<dds xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"
     xsi:noNamespaceSchemaLocation="http://www.omg.org/spec/DDS-SECURITY/20170901/omg_shared_ca_governance.xsd">
  <domain_access_rules>
    <domain_rule>
      <domains><id>$domain</id></domains>
      <allow_unauthenticated_participants>false</allow_unauthenticated_participants>
      <enable_join_access_control>true</enable_join_access_control>
      <discovery_protection_kind>ENCRYPT</discovery_protection_kind>
      <liveliness_protection_kind>ENCRYPT</liveliness_protection_kind>
      <rtps_protection_kind>ENCRYPT</rtps_protection_kind>
      <topic_access_rules>
        <topic_rule>
          <topic_expression>cosim_*</topic_expression>
          <enable_discovery_protection>true</enable_discovery_protection>
          <enable_liveliness_protection>true</enable_liveliness_protection>
          <enable_read_access_control>true</enable_read_access_control>
          <enable_write_access_control>true</enable_write_access_control>
          <metadata_protection_kind>ENCRYPT</metadata_protection_kind>
          <data_protection_kind>ENCRYPT</data_protection_kind>
        </topic_rule>
      </topic_access_rules>
    </domain_rule>
  </domain_access_rules>
</dds>
EOF

# Permissions: the master publishes commands and reads replies (and, for host = "process"
# workers it starts itself with its own identity, also the other way round, in their
# partitions cosim-proc-*); a worker reads commands and publishes replies, in the bench's
# partition only. Anything else is denied.
grant() {
  local name=$1 pub=$2 sub=$3 parts=$4
  cat <<EOF
    <grant name="$name">
      <subject_name>$(subject_dn "$name")</subject_name>
      <validity><not_before>$now</not_before><not_after>$until</not_after></validity>
      <allow_rule>
        <domains><id>$domain</id></domains>
        <publish>
          <topics>$pub</topics>
          <partitions>$parts</partitions>
        </publish>
        <subscribe>
          <topics>$sub</topics>
          <partitions>$parts</partitions>
        </subscribe>
      </allow_rule>
      <default>DENY</default>
    </grant>
EOF
}
{
  cat <<EOF
<?xml version="1.0" encoding="UTF-8"?>
<dds xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"
     xsi:noNamespaceSchemaLocation="http://www.omg.org/spec/DDS-SECURITY/20170901/omg_shared_ca_permissions.xsd">
  <permissions>
EOF
  grant master "<topic>cosim_cmd_*</topic><topic>cosim_reply_*</topic>" \
    "<topic>cosim_cmd_*</topic><topic>cosim_reply_*</topic>" \
    "<partition>$partition</partition><partition>cosim-proc-*</partition>"
  for w in "${workers[@]}"; do
    grant "$w" "<topic>cosim_reply_*</topic>" "<topic>cosim_cmd_*</topic>" \
      "<partition>$partition</partition>"
  done
  cat <<EOF
  </permissions>
</dds>
EOF
} > permissions.xml

for doc in governance permissions; do
  openssl smime -sign -in "$doc.xml" -text -out "$doc.p7s" -signer ca.pem -inkey ca.key
done
chmod 600 ./*.key
chmod 644 ca.pem master.pem ./*.p7s ./*.xml "${workers[@]/%/.pem}"

cat <<EOF
cosim_pki: bench "$bench", domain $domain, partition "$partition", valid until $until UTC, in $(pwd)
[dds.security] for the master (paths relative to the system file; a worker sets its own
identity_certificate and private_key, e.g. --set dds.security.identity_certificate=PKI/${workers[0]}.pem):
  identity_ca = "PKI/ca.pem"
  permissions_ca = "PKI/ca.pem"
  governance = "PKI/governance.p7s"
  permissions = "PKI/permissions.p7s"
  identity_certificate = "PKI/master.pem"
  private_key = "PKI/master.key"
EOF
