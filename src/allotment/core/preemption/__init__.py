"""Choosing victims for a blocked job (docs/design/preemption.md).

``victims.find_victims`` picks them for an allocated job that does not fit, ``caps.find_cap_victims``
for one held back by a ``max_gpus`` cap; both read the state through a read-only ``VictimView``
and return what to evict with the rule and reason of each, never changing anything themselves.
"""
