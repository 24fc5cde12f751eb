"""The package under test is the source tree's (python/), the library the
build's: WATTSIM_LIB (set by ctest) or build/sim/ beside the source."""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.dirname(HERE))
BUILD = os.environ.get("WS_BUILD_DIR", os.path.join(SRC, "build"))
os.environ.setdefault("WATTSIM_LIB", os.path.join(BUILD, "sim", "libwattsim.so"))
CLI = os.path.join(BUILD, "sim", "wattsim")
TRACES = os.path.join(SRC, "traces", "fetched", "zeus-nsdi23")
