from tests.backends.contract import BackendContract


class TestSimulatedBackend(BackendContract): ...
