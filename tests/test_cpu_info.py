"""CPU and thread functions (vkncnn/cpu_info.py) against real ncnn on this machine."""

import os

import pytest

import vkncnn

ncnn = pytest.importorskip("ncnn")

COUNTS = ["get_cpu_count", "get_little_cpu_count", "get_big_cpu_count", "get_physical_cpu_count",
          "get_physical_little_cpu_count", "get_physical_big_cpu_count"]
ISA = ["cpu_support_arm_neon", "cpu_support_arm_vfpv4", "cpu_support_arm_asimdhp", "cpu_support_x86_avx",
       "cpu_support_x86_avx2"]


@pytest.mark.parametrize("name", COUNTS)
def test_counts_match_ncnn(name):
    assert getattr(vkncnn, name)() == getattr(ncnn, name)()


@pytest.mark.parametrize("name", ISA)
def test_isa_support_matches_ncnn(name):
    ours = getattr(vkncnn, name)()
    assert ours in (0, 1)
    assert bool(ours) == bool(getattr(ncnn, name)())


def test_cpu_count_is_the_os_count():
    assert vkncnn.get_cpu_count() == os.cpu_count()
    assert vkncnn.get_big_cpu_count() + vkncnn.get_little_cpu_count() == vkncnn.get_cpu_count()


def test_powersave_round_trip_and_errors():
    try:
        for value in (1, 2, 0):
            assert vkncnn.set_cpu_powersave(value) == ncnn.set_cpu_powersave(value) == 0
            assert vkncnn.get_cpu_powersave() == ncnn.get_cpu_powersave() == value
        assert ncnn.set_cpu_powersave(3) == -1  # ncnn refuses with -1; vkncnn says why
        with pytest.raises(vkncnn.ArgumentError, match="got 3"):
            vkncnn.set_cpu_powersave(3)
        with pytest.raises(vkncnn.ArgumentTypeError):
            vkncnn.set_cpu_powersave("1")
        assert vkncnn.get_cpu_powersave() == 0
    finally:
        vkncnn.set_cpu_powersave(0)
        ncnn.set_cpu_powersave(0)


def test_omp_and_kmp_setters_keep_values():
    assert vkncnn.get_omp_num_threads() >= 1
    assert vkncnn.get_omp_thread_num() == ncnn.get_omp_thread_num() == 0
    try:
        assert vkncnn.set_omp_num_threads(3) is None
        assert vkncnn.get_omp_num_threads() == 3
        vkncnn.set_omp_dynamic(1)
        assert vkncnn.get_omp_dynamic() == 1
        vkncnn.set_kmp_blocktime(7)
        assert vkncnn.get_kmp_blocktime() == 7
        with pytest.raises(vkncnn.ArgumentTypeError, match="num_threads must be an int"):
            vkncnn.set_omp_num_threads(1.5)
        with pytest.raises(vkncnn.ArgumentError):
            vkncnn.set_omp_num_threads(0)
        with pytest.raises(vkncnn.ArgumentError):
            vkncnn.set_kmp_blocktime(-1)
        assert vkncnn.get_omp_num_threads() == 3
    finally:
        vkncnn.set_omp_num_threads(vkncnn.blas_threads.available_cpus())
        vkncnn.set_omp_dynamic(0)
        vkncnn.set_kmp_blocktime(0)
