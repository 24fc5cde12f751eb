# Run by `cmake --install` (python/CMakeLists.txt's install(CODE)): puts
# the wattsim package in the site folder of CMAKE_INSTALL_PREFIX as it is
# now (the --prefix given to `cmake --install`, else the configured one),
# and writes its _installed.py there. In: WS_PY_SOURCE (python/wattsim),
# WS_PY_BINARY (a scratch folder), WS_INSTALL_PYTHON, WS_PYTHON_SITE
# (relative to the prefix, or empty), WS_LIBDIR (libwattsim's folder,
# relative to the prefix).
set(prefix "${CMAKE_INSTALL_PREFIX}")
string(REGEX REPLACE "/+$" "" prefix "${prefix}")
set(site "${WS_PYTHON_SITE}")
if(NOT site)
  if(NOT EXISTS "${WS_INSTALL_PYTHON}")
    message(FATAL_ERROR "wattsim: cannot place the Python package: WS_INSTALL_PYTHON"
      " (${WS_INSTALL_PYTHON}) does not exist; configure with -DWS_INSTALL_PYTHON=/path/to/python3"
      " or -DWS_PYTHON_SITE=lib/python3/site-packages")
  endif()
  execute_process(
    COMMAND "${WS_INSTALL_PYTHON}" -c
      "import sys, sysconfig; b = sys.argv[1].rstrip('/') + '/'; on = [p for p in sys.path if p.startswith(b) and p.endswith('-packages')]; p = on[0] if on else sysconfig.get_path('purelib', 'posix_prefix', {'base': b, 'platbase': b}); print(p[len(b):].strip('/'))"
      "${prefix}"
    OUTPUT_VARIABLE site OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0 OR NOT site)
    message(FATAL_ERROR "wattsim: ${WS_INSTALL_PYTHON} could not name the site folder of"
      " ${prefix}; configure with -DWS_PYTHON_SITE=lib/python3/site-packages")
  endif()
endif()
set(dest "${prefix}/${site}")
file(RELATIVE_PATH libdir "${dest}/wattsim" "${prefix}/${WS_LIBDIR}")
file(WRITE "${WS_PY_BINARY}/_installed.py"
  "# Written by cmake --install: libwattsim's folder relative to this package.\n"
  "LIBDIR = \"${libdir}\"\n")
file(INSTALL "${WS_PY_SOURCE}" DESTINATION "${dest}"
  FILES_MATCHING PATTERN "*.py" PATTERN "__pycache__" EXCLUDE)
file(INSTALL "${WS_PY_BINARY}/_installed.py" DESTINATION "${dest}/wattsim")
# The bridge (lib/wattsim/bridges/python.so) finds the package through
# this file beside it: the site folder relative to the bridges folder,
# known only now.
file(RELATIVE_PATH bridge_site "${prefix}/${WS_LIBDIR}/wattsim/bridges" "${dest}")
file(WRITE "${WS_PY_BINARY}/python-site" "${bridge_site}\n")
file(INSTALL "${WS_PY_BINARY}/python-site" DESTINATION "${prefix}/${WS_LIBDIR}/wattsim/bridges")
