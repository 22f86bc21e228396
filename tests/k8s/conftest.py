from tests.k8s.cluster import harness, kube

__all__ = ["harness", "kube"]
