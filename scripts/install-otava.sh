#!/usr/bin/env bash
# Installs Apache Otava (Apache-2.0), pinned with every package it needs, into a virtualenv under
# the tools cache, for the test that holds `conform load trend`'s change points to Otava's on the
# same CSVs (test/full/load-otava.test.ts). Skips when that version is already there; once
# installed it needs no network (Otava reads CSV files; its Graphite, PostgreSQL, BigQuery and
# Slack clients are never configured). `--path` prints the virtualenv's directory, installs nothing.
set -euo pipefail
OTAVA_VERSION=0.8.0
# `pip freeze` of a virtualenv with apache-otava==0.8.0 installed (2026-11-27), so every install is this one.
PINS=(
  "apache-otava==${OTAVA_VERSION}" asn1crypto==1.5.1 certifi==2026.10.19.post1 cffi==2.1.1 charset-normalizer==3.5.3
  ConfigArgParse==1.9.0 cryptography==50.0.2 dateparser==1.5.0 google-api-core==2.44.0 google-auth==2.63.0
  google-cloud-bigquery==3.47.0 google-cloud-core==2.8.0 google-crc32c==1.9.0 google-resumable-media==2.11.0
  googleapis-common-protos==1.76.0 grpcio==1.85.3 grpcio-status==1.85.3 idna==3.20 numpy==2.2.0
  opentelemetry-api==1.45.2 packaging==26.4 pg8000==1.31.6 proto-plus==1.29.0 protobuf==7.36.2 pyasn1==0.6.5
  pyasn1_modules==0.4.2 pycparser==3.12 pystache==0.6.8 python-dateutil==2.9.0.post0 pytz==2026.6
  regex==2026.11.19 requests==2.34.2 ruamel.yaml==0.18.16 ruamel.yaml.clib==0.2.15 scipy==1.16.3 scramp==1.5.0
  six==1.17.0 slack_sdk==3.48.0 tabulate==0.10.0 typing_extensions==4.16.0 tzlocal==5.4.5 urllib3==2.8.0
  validators==0.36.0
)
dir="${CONFORM_TOOLS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/conform-tools}/otava-${OTAVA_VERSION}"
if [ "${1:-}" = "--path" ]; then echo "$dir"; exit 0; fi
if [ -x "$dir/bin/otava" ] && "$dir/bin/pip" show apache-otava 2>/dev/null | grep -q "^Version: ${OTAVA_VERSION}$"; then
  echo "apache-otava ${OTAVA_VERSION} already in $dir"
  exit 0
fi
python3 -m venv "$dir"
"$dir/bin/pip" install --quiet --disable-pip-version-check --no-deps "${PINS[@]}"
"$dir/bin/pip" check --disable-pip-version-check >/dev/null
echo "apache-otava ${OTAVA_VERSION} installed in $dir"
