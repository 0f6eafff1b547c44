# librooftune_checks.sh — sourced by test_librooftune.sh and test_install.sh: the promises of a
# built librooftune.  Each function prints FAIL lines and returns 1 when a promise is broken.

# The NEEDED entries are the promised libraries only: cuBLASLt, SQLite and the C runtime (and,
# in a sanitizer build, the sanitizers' runtimes, which the build adds to everything).
librooftune_check_needed() {
  local lib=$1 extra needed san='^$'
  needed=$(readelf -d "$lib" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
  if echo "$needed" | grep -q '^libasan\.so'; then
    san='^(libasan|libubsan)\.so\.[0-9]+$'
    echo "note: $lib is a sanitizer build: libasan and libubsan allowed"
  fi
  extra=$(echo "$needed" | grep -Ev "$san" |
    grep -Ev '^(libcublasLt\.so\.[0-9]+|libsqlite3\.so\.0|libc\.so\.6|libm\.so\.6|libdl\.so\.2|libpthread\.so\.0|libgcc_s\.so\.1|ld-linux[-a-z0-9_.]*\.so\.[0-9]+)$')
  if [ -n "$extra" ]; then
    echo "FAIL: $lib needs libraries it does not promise: $(echo $extra)"
    return 1
  fi
}

# The dynamic symbols it defines are exactly the version script's global names.
librooftune_check_exports() {
  local lib=$1 map=$2 got want
  got=$(nm -D --defined-only "$lib" | awk '$2 ~ /^[TDBRVW]$/ {print $3}' | sed 's/@.*//' | sort -u)
  want=$(sed -n 's/^ *\(rooftune_[a-z0-9_]*\);.*/\1/p' "$map" | sort -u)
  if [ "$got" != "$want" ]; then
    echo "FAIL: $lib exports other names than $map:"
    diff <(echo "$want") <(echo "$got") | sed -n 's/^[<>]/    &/p'
    return 1
  fi
}
