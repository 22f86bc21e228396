import pytest

from tests.backends.contract import BackendContract

pytestmark = pytest.mark.slurm


class TestSlurmBackend(BackendContract): ...
