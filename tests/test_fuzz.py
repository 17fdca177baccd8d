"""Hostile model files: the quick fuzz profile (a few thousand mutated real files).

The long profile (100,000+ cases) is `python -m vkncnn.tools.fuzz --cases 100000`.
"""

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from vkncnn.tools import fuzz

CORPUS = fuzz.seed_corpus()


@settings(max_examples=1500, deadline=None, derandomize=True)
@given(st.integers(0, 2**32 - 1))
def test_mutated_model_files_load_or_raise_vkncnn_errors(seed):
    rng = random.Random(seed)
    kind, param, weights = CORPUS[rng.randrange(len(CORPUS))]
    p, w = fuzz.mutate(kind, param, weights, rng)
    outcome = fuzz.run_case(kind, p, w, time_limit=1.0)
    assert not outcome.startswith("FAIL"), outcome


def test_loading_never_touches_the_users_files(tmp_path):
    src = fuzz.BENCHMARK_DIR / "squeezenet.param"
    copy = tmp_path / "m.param"
    copy.write_bytes(src.read_bytes())
    before = (copy.stat().st_mtime_ns, copy.read_bytes())
    fuzz.load_case("text", copy.read_bytes(), b"")
    import vkncnn
    net = vkncnn.Net()
    net.opt.use_vulkan_compute = False
    net.load_param(str(copy))
    assert (copy.stat().st_mtime_ns, copy.read_bytes()) == before
