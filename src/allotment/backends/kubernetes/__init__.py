"""Kubernetes backend: the budget tree as KAI-Scheduler queues (and Kueue cohorts)."""
