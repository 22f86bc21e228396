"""Sorted lists of (time, name) and (time, node) pairs and of candidate keys, searched by comparing
native fields.

Why: under mypyc ``bisect_left`` and ``insort`` on such a list are generic calls, each of whose
steps compares two boxed tuples element by element (an equality, then a ``<``, each through the
float's or string's rich comparison).  These read each pair's fields natively, and take the
same steps as the library's (``insort`` is ``insort_right``).

Same places: for pairs of these types the field by field test is the tuple ``<`` exactly, also
against a pair of the list with a NaN time (neither is less), but for a NaN in the pair placed,
which a tuple comparison holds equal to itself when it is the same object (identity first):
that pair goes through ``bisect`` itself.  ``key_place`` was the first of these (a refit's
search, ``core.candidates``); a queue's own keys are placed by it too (``core.queues``).
"""

from __future__ import annotations

from bisect import bisect_left, insort


def insort_named(keys: list[tuple[float, str]], k: tuple[float, str]) -> None:
    """``insort(keys, k)``."""
    t, name = k
    if t != t:
        insort(keys, k)
        return
    lo, hi = 0, len(keys)
    while lo < hi:
        mid = (lo + hi) // 2
        k0, k1 = keys[mid]
        if t < k0 or (t == k0 and name < k1):
            hi = mid
        else:
            lo = mid + 1
    keys.insert(lo, k)


def drop_named(keys: list[tuple[float, str]], k: tuple[float, str]) -> None:
    """``del keys[bisect_left(keys, k)]``."""
    t, name = k
    if t != t:
        del keys[bisect_left(keys, k)]
        return
    lo, hi = 0, len(keys)
    while lo < hi:
        mid = (lo + hi) // 2
        k0, k1 = keys[mid]
        if k0 < t or (k0 == t and k1 < name):
            lo = mid + 1
        else:
            hi = mid
    del keys[lo]


def insort_numbered(keys: list[tuple[float, int]], k: tuple[float, int]) -> None:
    """``insort(keys, k)``."""
    t, i = k
    if t != t:
        insort(keys, k)
        return
    lo, hi = 0, len(keys)
    while lo < hi:
        mid = (lo + hi) // 2
        k0, k1 = keys[mid]
        if t < k0 or (t == k0 and i < k1):
            hi = mid
        else:
            lo = mid + 1
    keys.insert(lo, k)


def drop_numbered(keys: list[tuple[float, int]], k: tuple[float, int]) -> None:
    """``del keys[bisect_left(keys, k)]``."""
    t, i = k
    if t != t:
        del keys[bisect_left(keys, k)]
        return
    lo, hi = 0, len(keys)
    while lo < hi:
        mid = (lo + hi) // 2
        k0, k1 = keys[mid]
        if k0 < t or (k0 == t and k1 < i):
            lo = mid + 1
        else:
            hi = mid
    del keys[lo]


def key_place(keys: list[tuple[float, float, str]], k: tuple[float, float, str]) -> int:
    """``bisect_left(keys, k)``: where ``k`` goes in the sorted ``keys``, by comparing their
    fields as floats and a string (``bisect`` compared boxed tuples, a generic call each).  For
    3-tuples of these types the field by field test is the tuple ``<`` exactly -- but for a NaN,
    which a tuple comparison holds equal to itself when it is the same object: a key with a NaN
    is placed by ``bisect_left`` itself."""
    s, e, jid = k
    if s != s or e != e:
        return bisect_left(keys, k)
    lo, hi = 0, len(keys)
    while lo < hi:
        mid = (lo + hi) // 2
        k0, k1, k2 = keys[mid]
        if k0 < s or (k0 == s and (k1 < e or (k1 == e and k2 < jid))):
            lo = mid + 1
        else:
            hi = mid
    return lo
