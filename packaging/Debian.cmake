# The Debian package (`cpack -G DEB` in the build directory): what
# `cmake --install` puts under /usr, stripped, with its dependencies found
# by dpkg-shlibdeps from the libraries the binary links.  The version's
# Debian revision and the release date come from packaging/changelog, whose
# first entry must be for the version project() declares.
file(STRINGS ${CMAKE_SOURCE_DIR}/packaging/changelog _changelog)
list(GET _changelog 0 _head)
if(NOT _head MATCHES "^idemload \\(([^)-]+)-([^)]+)\\)")
  message(FATAL_ERROR "packaging/changelog: first line is not 'idemload (VERSION-REVISION) ...'")
endif()
if(NOT CMAKE_MATCH_1 STREQUAL PROJECT_VERSION)
  message(FATAL_ERROR "packaging/changelog's first entry is for ${CMAKE_MATCH_1}, project() "
                      "says ${PROJECT_VERSION}: add an entry for ${PROJECT_VERSION}")
endif()
set(IDEMLOAD_DEBIAN_REVISION ${CMAKE_MATCH_2})
foreach(_line IN LISTS _changelog)
  if(_line MATCHES "^ -- .*  [A-Z][a-z][a-z], ([0-9]+) ([A-Z][a-z][a-z]) ([0-9][0-9][0-9][0-9]) ")
    set(_months Jan Feb Mar Apr May Jun Jul Aug Sep Oct Nov Dec)
    list(FIND _months ${CMAKE_MATCH_2} _m)
    math(EXPR _m "${_m} + 1")
    string(LENGTH "${CMAKE_MATCH_1}" _dlen)
    set(_day ${CMAKE_MATCH_1})
    if(_dlen EQUAL 1)
      set(_day 0${_day})
    endif()
    if(_m LESS 10)
      set(_m 0${_m})
    endif()
    # The man page's date: the release's, not the build's (reproducible).
    set(IDEMLOAD_RELEASE_DATE "${CMAKE_MATCH_3}-${_m}-${_day}")
    break()
  endif()
endforeach()
if(NOT IDEMLOAD_RELEASE_DATE)
  message(FATAL_ERROR "packaging/changelog: no ' -- NAME <EMAIL>  DATE' line")
endif()

# gzip -9n: no name or time stamp inside, so the package is reproducible.
set(IDEMLOAD_CHANGELOG_GZ ${CMAKE_BINARY_DIR}/changelog.Debian.gz)
add_custom_command(OUTPUT ${IDEMLOAD_CHANGELOG_GZ}
  COMMAND ${CMAKE_COMMAND} -E copy ${CMAKE_SOURCE_DIR}/packaging/changelog
          ${CMAKE_BINARY_DIR}/changelog.Debian
  COMMAND gzip -9nf ${CMAKE_BINARY_DIR}/changelog.Debian
  DEPENDS ${CMAKE_SOURCE_DIR}/packaging/changelog VERBATIM)
add_custom_target(debian_changelog ALL DEPENDS ${IDEMLOAD_CHANGELOG_GZ})
install(FILES ${CMAKE_SOURCE_DIR}/packaging/copyright ${IDEMLOAD_CHANGELOG_GZ}
        DESTINATION ${CMAKE_INSTALL_DOCDIR})

set(IDEMLOAD_MAINTAINER "idemload maintainers <idemload-maintainers@example.org>"
    CACHE STRING "Maintainer field of the Debian package")
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME idemload)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "${IDEMLOAD_MAINTAINER}")
# The PostgreSQL License, as PostgreSQL itself and pgcopydb.
set(CPACK_RESOURCE_FILE_LICENSE ${CMAKE_SOURCE_DIR}/LICENSE)
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "load payment statement files into PostgreSQL idempotently")
set(CPACK_PACKAGE_DESCRIPTION
"idemload loads payment-channel statement files (CSV or NDJSON, gzip or
plain) into a PostgreSQL table so that, however often, in whatever order
and with whatever concurrency files are loaded, each business key ends as
exactly one active row holding its latest version, and no valid row is
lost. Bad rows go to a rejects file with their reason; a ledger in the
database skips files already loaded and resumes interrupted loads.
.
It comes with a man page, bash completion, and examples of a nightly load
from a systemd timer or cron.")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_RELEASE ${IDEMLOAD_DEBIAN_REVISION})
set(CPACK_DEBIAN_PACKAGE_SECTION database)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# --timezone Asia/Shanghai reads the tz database; GBK comes with libc6's
# gconv modules, zip with zlib: no other library.
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS tzdata)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
set(CPACK_INSTALL_DEFAULT_DIRECTORY_PERMISSIONS
    OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ GROUP_EXECUTE WORLD_READ WORLD_EXECUTE)
# Only what this file configures: no source package, no other generator.
set(CPACK_SOURCE_GENERATOR "")
include(CPack)
