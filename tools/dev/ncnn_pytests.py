"""Run ncnn's own Python binding tests (python/tests of Tencent/ncnn) against vkncnn.

The tests are ncnn's, not ours: they are read from an ncnn checkout (a folder, or a git
directory with the revision to take), copied to a temporary folder beside a one-line
module `ncnn.py` that makes `import ncnn` resolve to vkncnn, and run there with pytest.
`--real` runs them against the installed ncnn instead, for the same-machine comparison.

    python -m vkncnn.tools.dev.ncnn_pytests /path/to/ncnn            # a source folder
    python -m vkncnn.tools.dev.ncnn_pytests /path/to/ncnn.git --rev HEAD
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

SHIM = "import sys\nimport vkncnn\nsys.modules['ncnn'] = vkncnn\n"


def copy_tests(source: Path, rev: str | None, dest: Path) -> None:
    """ncnn's python/tests into dest/tests (pytest runs from dest: the tests open tests/*.param)."""
    if rev is None:
        shutil.copytree(source / "python" / "tests", dest / "tests")
        return
    archive = subprocess.run(["git", "-C", str(source), "archive", rev, "python/tests"],
                             check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(dest)], input=archive, check=True)
    shutil.move(str(dest / "python" / "tests"), str(dest / "tests"))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m vkncnn.tools.dev.ncnn_pytests", description=__doc__.split("\n\n")[0])
    ap.add_argument("ncnn", type=Path, help="an ncnn source folder, or a git directory with --rev")
    ap.add_argument("--rev", help="git revision to read the tests from (when NCNN is a git directory)")
    ap.add_argument("--real", action="store_true", help="run against the installed ncnn, not vkncnn")
    ap.add_argument("pytest_args", nargs="*", help="passed to pytest (e.g. -k mat)")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        copy_tests(args.ncnn, args.rev, work)
        env_path = []
        if not args.real:
            (work / "shim").mkdir()
            (work / "shim" / "ncnn.py").write_text(SHIM)
            env_path = [str(work / "shim")]
        cmd = [sys.executable, "-c", "import sys, pytest; sys.path[:0] = sys.argv[1:2]; "
               "sys.exit(pytest.main(sys.argv[2:]))", ":".join(env_path) or ".",
               "-q", "-p", "no:cacheprovider", "tests", *args.pytest_args]
        return subprocess.run(cmd, cwd=work).returncode


if __name__ == "__main__":
    sys.exit(main())
