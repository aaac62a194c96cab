#!/usr/bin/env bash
# Installing (SPEC.md "Installing it, running it nightly"): `cmake --install`
# puts bin/idemload, the man page, the bash completion and
# share/doc/idemload (README, examples) under a prefix; `cpack -G DEB` builds
# a package that lintian finds no error in, whose Depends are the runtime
# libraries' packages, with a stripped binary and a gzipped man page; the
# package extracted into a scratch root (dpkg -x) runs, and `man -l` reads
# its page.  Uses the build this test belongs to (IDEMLOAD_BUILD).
. "$(dirname "$0")/../lib.sh"
BUILD=${IDEMLOAD_BUILD:?IDEMLOAD_BUILD (the build directory) not set}
for tool in cpack lintian dpkg-deb dpkg-shlibdeps man file; do
    command -v "$tool" >/dev/null || fail "$tool is missing (scripts/setup.sh installs it)"
done
[ "$FAILED" -eq 0 ] || finish

# --- cmake --install into a prefix
cmake --install "$BUILD" --prefix "$WORK/prefix" >install.log 2>&1
eq "cmake --install exits 0" 0 $?
P=$WORK/prefix
for f in bin/idemload share/man/man1/idemload.1.gz share/bash-completion/completions/idemload \
         share/doc/idemload/README.md share/doc/idemload/copyright \
         share/doc/idemload/examples/idemload-nightly \
         share/doc/idemload/examples/idemload-nightly.service \
         share/doc/idemload/examples/idemload-nightly.timer share/doc/idemload/examples/crontab; do
    check "installed: $f" test -s "$P/$f"
done
check "installed binary is executable" test -x "$P/bin/idemload"
check "installed examples are plain files (mode 644)" \
    test -z "$(find "$P/share/doc/idemload/examples" -type f ! -perm 644)"
eq "installed man page: the generated one" "$(cat "$(dirname "$IDEMLOAD_REAL")/doc/idemload.1")" \
    "$(gzip -dc "$P/share/man/man1/idemload.1.gz")"

# --- the Debian package
mkdir -p pkg
cpack -G DEB --config "$BUILD/CPackConfig.cmake" -B "$WORK/pkg" >cpack.log 2>&1
eq "cpack -G DEB exits 0" 0 $?
deb=$(ls pkg/*.deb 2>/dev/null | head -n 1)
check "a .deb was built" test -n "$deb"
[ -n "$deb" ] || finish
version=$("$IDEMLOAD" --version | sed 's/^idemload //')
eq "the package's version is idemload's, Debian revision 1" "$version-1" \
    "$(dpkg-deb -f "$deb" Version)"
eq "Package" "idemload" "$(dpkg-deb -f "$deb" Package)"
eq "Section" "database" "$(dpkg-deb -f "$deb" Section)"
eq "Priority" "optional" "$(dpkg-deb -f "$deb" Priority)"
depends=$(dpkg-deb -f "$deb" Depends)
echo "Depends: $depends"
for lib in libc6 libpq5 libjansson4 libcsv3 zlib1g; do
    check "Depends names $lib" grep -qE "(^|, )$lib( \(|,|$)" <<<"$depends"
done
# Every shared library the binary needs comes from a package Depends names.
for so in $(readelf -d "$IDEMLOAD" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
    pkg=$(dpkg -S "*/$so" 2>/dev/null | head -n 1 | cut -d: -f1)
    check "$so (from ${pkg:-?}) is in Depends" grep -qE "(^|, )${pkg:-none}( |,|$)" <<<"$depends"
done

lintian --no-tag-display-limit "$deb" >lintian.txt 2>&1
lintian_rc=$?
cat lintian.txt
# 0: checked, no error tag; 1: error tags; anything else: it did not check
# the package (no error line then proves nothing).
eq "lintian checked the package and found no error (exit 0)" 0 "$lintian_rc"
eq "lintian: no error" "" "$(grep '^E:' lintian.txt)"

# --- extracted into a scratch root
dpkg-deb -x "$deb" root
R=$WORK/root
check "extracted: usr/bin/idemload" test -x "$R/usr/bin/idemload"
check "the binary is stripped" grep -q ", stripped" <<<"$(file -L "$R/usr/bin/idemload")"
check "the man page is gzipped" gzip -t "$R/usr/share/man/man1/idemload.1.gz"
check "copyright in /usr/share/doc/idemload" test -s "$R/usr/share/doc/idemload/copyright"
# The license is the PostgreSQL License (SPEC.md, "Installing it"): the
# machine-readable copyright names it, and its text is LICENSE's, word for word.
check "copyright: License: PostgreSQL for every file" \
    grep -qx 'License: PostgreSQL' "$R/usr/share/doc/idemload/copyright"
eq "copyright's license text is LICENSE's" \
    "$(sed -n '3,$p' "$SRC/LICENSE" | tr -s ' \n' ' ')" \
    "$(awk 'p; /^License: PostgreSQL$/ && seen++ {p = 1}' "$R/usr/share/doc/idemload/copyright" \
       | sed -e 's/^ //' -e 's/^\.$//' | tr -s ' \n' ' ')"
check "changelog.Debian.gz in /usr/share/doc/idemload" gzip -t "$R/usr/share/doc/idemload/changelog.Debian.gz"
check "the completion in /usr/share/bash-completion/completions" \
    bash -n "$R/usr/share/bash-completion/completions/idemload"
check "nothing outside /usr" test "$(ls "$R")" = usr

"$R/usr/bin/idemload" --version >v.txt 2>&1
eq "installed idemload --version exits 0" 0 $?
eq "installed idemload --version" "idemload $version" "$(cat v.txt)"
"$R/usr/bin/idemload" --help >h.txt 2>&1
eq "installed idemload --help exits 0" 0 $?
commands=$(sed -n 's/^  idemload \([a-z][a-z-]*\) .*/\1/p' h.txt)
check "installed --help lists commands" test -n "$commands"
"$R/usr/bin/idemload" validate --report rep.json "$SRC/samples/statements-alipay-2026-11-28.ndjson" \
    >/dev/null 2>&1
check "installed idemload validates a sample (status 0 or 1)" test $? -le 1
check "and writes its report" jtrue rep.json "r['totals']['rows_read'] > 0"

LANG=C MANWIDTH=200 man -l "$R/usr/share/man/man1/idemload.1.gz" >man.txt 2>man.err
eq "man -l on the installed page exits 0" 0 $?
eq "man -l: no warning" "" "$(cat man.err)"
check "the page is idemload(1)" grep -q "^IDEMLOAD(1)" man.txt
for cmd in $commands; do
    check "the installed page has the command $cmd" grep -q "^   idemload $cmd " man.txt
done
for s in SYNOPSIS "EXIT STATUS" FILES ENVIRONMENT EXAMPLES; do
    check "the installed page has $s" grep -qx "$s" man.txt
done
finish
