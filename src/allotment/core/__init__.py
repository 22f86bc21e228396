"""The scheduling core: pure functions from (policy, state, now) to decisions with reasons.

Nothing in this package reads a clock, a file, randomness or the network.
"""
