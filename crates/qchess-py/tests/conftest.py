import pytest


@pytest.fixture
def numpy_missing():
    """True when NumPy is not importable (CI installs no NumPy)."""
    try:
        import numpy  # noqa: F401
    except ImportError:
        return True
    return False
