#!/usr/bin/env bash
# Makes a private CA and, signed by it, a server certificate for the
# scheduler and a client certificate, for TLS between ptxbench's processes:
#
#   scripts/make_certs.sh DIR [HOST ...]
#
# DIR gets ca.pem (give it to clients and executors: --tls-ca), server.pem and
# server.key (the scheduler: --tls-cert, --tls-key), client.pem and client.key
# (clients, when the scheduler asks for certificates: --tls-client-ca ca.pem).
# The server certificate names localhost, 127.0.0.1, ::1 and every HOST (a
# name or an IP address). Keys are ECDSA P-256, created private (mode 600);
# certificates last 825 days. For a cluster with its own PKI, use that instead.
set -euo pipefail
if [ $# -lt 1 ]; then
  echo "usage: $0 DIR [HOST ...]" >&2
  exit 2
fi
dir=$1
shift
command -v openssl >/dev/null || { echo "$0: openssl is not installed" >&2; exit 1; }
mkdir -p "$dir"
umask 077

san="DNS:localhost,IP:127.0.0.1,IP:::1"
for host in "$@"; do
  if [[ $host =~ ^[0-9.]+$ || $host == *:* ]]; then san+=",IP:$host"; else san+=",DNS:$host"; fi
done

key() { openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$1" 2>/dev/null; }
sign() {  # NAME SUBJECT EXTENSIONS
  openssl req -new -key "$dir/$1.key" -subj "$2" -out "$dir/$1.csr"
  openssl x509 -req -in "$dir/$1.csr" -CA "$dir/ca.pem" -CAkey "$dir/ca.key" -CAcreateserial \
    -days 825 -sha256 -extfile <(printf '%s\n' "$3") -out "$dir/$1.pem" 2>/dev/null
  rm -f "$dir/$1.csr"
}

key "$dir/ca.key"
openssl req -x509 -new -key "$dir/ca.key" -subj "/CN=ptxbench CA" -days 825 -sha256 \
  -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" \
  -out "$dir/ca.pem"
key "$dir/server.key"
sign server "/CN=ptxbench-scheduler" \
  "subjectAltName=$san
extendedKeyUsage=serverAuth
keyUsage=critical,digitalSignature"
key "$dir/client.key"
sign client "/CN=ptxbench-client" \
  "extendedKeyUsage=clientAuth
keyUsage=critical,digitalSignature"
rm -f "$dir/ca.srl"
chmod 644 "$dir"/*.pem
echo "made $dir/{ca,server,client}.pem with keys; the server certificate names $san"
