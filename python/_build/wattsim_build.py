"""A PEP 517 build backend for the wattsim package, standard library only:
the wheel is the wattsim/ folder as it is (pure Python) plus its
metadata, so pip builds it offline, without setuptools or wheel."""
import base64
import hashlib
import os
import tarfile
import zipfile

NAME, VERSION = "wattsim", "0.4.0"
HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DIST = "%s-%s" % (NAME, VERSION)
METADATA = ("Metadata-Version: 2.1\nName: %s\nVersion: %s\nSummary: Trace-driven simulator"
            " of the energy/time trade-off of DNN training, from Python\n"
            "Requires-Python: >=3.9\nProvides-Extra: dataframes\n"
            "Requires-Dist: pandas; extra == \"dataframes\"\nProvides-Extra: policies\n"
            "Requires-Dist: numpy; extra == \"policies\"\n" % (NAME, VERSION))
WHEEL = "Wheel-Version: 1.0\nGenerator: wattsim_build\nRoot-Is-Purelib: true\nTag: py3-none-any\n"


def _files():
    for root, dirs, files in os.walk(os.path.join(HERE, NAME)):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for f in sorted(files):
            if f.endswith(".py") and f != "_installed.py":
                p = os.path.join(root, f)
                yield p, os.path.relpath(p, HERE)


def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    d = os.path.join(metadata_directory, DIST + ".dist-info")
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "METADATA"), "w") as f:
        f.write(METADATA)
    with open(os.path.join(d, "WHEEL"), "w") as f:
        f.write(WHEEL)
    return DIST + ".dist-info"


def _digest(data):
    h = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return "sha256=%s,%d" % (h, len(data))


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    name = DIST + "-py3-none-any.whl"
    record = []
    with zipfile.ZipFile(os.path.join(wheel_directory, name), "w",
                         zipfile.ZIP_DEFLATED) as z:
        def add(arc, data):
            z.writestr(arc, data)
            record.append("%s,%s" % (arc, _digest(data)))
        for path, arc in _files():
            with open(path, "rb") as f:
                add(arc, f.read())
        add(DIST + ".dist-info/METADATA", METADATA.encode())
        add(DIST + ".dist-info/WHEEL", WHEEL.encode())
        record.append(DIST + ".dist-info/RECORD,,")
        z.writestr(DIST + ".dist-info/RECORD", "\n".join(record) + "\n")
    return name


def build_sdist(sdist_directory, config_settings=None):
    name = DIST + ".tar.gz"
    with tarfile.open(os.path.join(sdist_directory, name), "w:gz") as t:
        for path, arc in _files():
            t.add(path, os.path.join(DIST, arc))
        for extra in ("pyproject.toml", os.path.join("_build", "wattsim_build.py")):
            t.add(os.path.join(HERE, extra), os.path.join(DIST, extra))
        info = os.path.join(HERE, "_build", "PKG-INFO")
        with open(info, "w") as f:
            f.write(METADATA)
        t.add(info, os.path.join(DIST, "PKG-INFO"))
        os.unlink(info)
    return name
