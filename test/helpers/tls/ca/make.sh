#!/usr/bin/env bash
# Writes the throw-away certificates of the private-CA tests (test/unit/tls-ca.test.ts) into this
# folder, once; they are committed, valid for a century, so the tests need no tool at run time:
#   ca.pem, ca-key.pem        a CA, "conform test CA", as a company CA would be
#   leaf.pem, leaf-key.pem    a server certificate it signs, for 127.0.0.1 and localhost
#   other-ca.pem              another CA, which signs nothing the tests serve (the wrong --ca)
# Regenerate (needs openssl): bash test/helpers/tls/ca/make.sh
set -euo pipefail
cd "$(dirname "$0")"
DAYS=36500
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
openssl req -x509 -newkey rsa:2048 -nodes -days "$DAYS" -subj "/CN=conform test CA" \
  -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" \
  -keyout ca-key.pem -out ca.pem 2>/dev/null
openssl req -newkey rsa:2048 -nodes -subj "/CN=127.0.0.1" -keyout leaf-key.pem -out "$work/leaf.csr" 2>/dev/null
printf 'basicConstraints=CA:FALSE\nkeyUsage=digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\nsubjectAltName=IP:127.0.0.1,DNS:localhost\n' >"$work/leaf.ext"
openssl x509 -req -in "$work/leaf.csr" -CA ca.pem -CAkey ca-key.pem -CAcreateserial -CAserial "$work/ca.srl" \
  -days "$DAYS" -extfile "$work/leaf.ext" -out leaf.pem 2>/dev/null
openssl req -x509 -newkey rsa:2048 -nodes -days "$DAYS" -subj "/CN=another test CA" \
  -addext "basicConstraints=critical,CA:TRUE" -keyout "$work/other-key.pem" -out other-ca.pem 2>/dev/null
openssl verify -CAfile ca.pem leaf.pem
