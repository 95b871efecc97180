import os

import pytest

# A local ray.init() writes an auth token unless this is set; nothing here may reach a model hub.
os.environ.setdefault("RAY_AUTH_MODE", "disabled")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


@pytest.fixture
def fresh_ray():
    """A test that starts Ray gets a clean slate and leaves one."""
    import ray

    if ray.is_initialized():
        ray.shutdown()
    yield
    ray.shutdown()
