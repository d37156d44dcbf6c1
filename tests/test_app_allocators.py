"""The worker gives freed table memory back (issue 25, the worker under 2 GB at 200,000 outputs): Arrow's buffers
from the system allocator and glibc's large blocks always mapped, set once by the frame, a user's own setting
left alone. Guarded by what was set, not by a measurement."""

from __future__ import annotations

import platform

import pyarrow
import pytest

pytest.importorskip("streamlit")
from empathy_app import loading  # noqa: E402


@pytest.fixture()
def fresh(monkeypatch):
    """A process whose allocators were not set yet; Arrow's pool put back afterwards."""
    pool = pyarrow.default_memory_pool()
    monkeypatch.setattr(loading, "_allocators_set", False)
    monkeypatch.delenv("ARROW_DEFAULT_MEMORY_POOL", raising=False)
    monkeypatch.delenv("MALLOC_MMAP_THRESHOLD_", raising=False)
    yield
    pyarrow.set_memory_pool(pool)


def test_arrow_and_glibc_return_freed_memory_once(fresh, monkeypatch):
    calls = []
    monkeypatch.setattr(loading.ctypes, "CDLL", lambda name: type("Libc", (), {
        "mallopt": staticmethod(lambda option, value: calls.append((option, value)) or 1)}))
    done = loading.return_freed_memory()
    assert pyarrow.default_memory_pool().backend_name == "system"
    assert done["arrow"] == "system"
    if platform.libc_ver()[0] == "glibc":
        assert calls == [(-3, 8 << 20)] and done["mmap_threshold"] == str(8 << 20)
    assert loading.return_freed_memory() == {}  # once per process
    assert len(calls) <= 1


def test_a_users_own_settings_are_kept(fresh, monkeypatch):
    monkeypatch.setenv("ARROW_DEFAULT_MEMORY_POOL", "jemalloc")
    monkeypatch.setenv("MALLOC_MMAP_THRESHOLD_", "65536")
    before = pyarrow.default_memory_pool().backend_name
    monkeypatch.setattr(loading.ctypes, "CDLL", lambda name: pytest.fail("mallopt called"))
    assert loading.return_freed_memory() == {}
    assert pyarrow.default_memory_pool().backend_name == before


@pytest.mark.usefixtures("_store")
def test_the_frame_sets_them_before_the_data_set_is_loaded(fresh, monkeypatch):
    from conftest import open_page

    seen = []
    real = loading._load

    def load():
        seen.append(pyarrow.default_memory_pool().backend_name)
        return real()

    monkeypatch.setattr(loading, "_load", load)
    open_page("app_pages/1_Data.py")
    assert seen and set(seen) == {"system"}
